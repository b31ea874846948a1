// The body of vecadd, compiled ahead of time by nvcc for sm_80 and sm_90a (CMakeLists.txt).
#include "vecadd_kernel.hpp"

namespace simt_example {

// Each thread writes the one element its witness gives it; the last block's extra threads get an
// empty slot and write nothing.
TESSERA_SIMT_DEFINE(vecadd, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  if (auto o = z.at(i)) *o = x[i] + y[i];
}

TESSERA_SIMT_DEFINE(vecadd_raw, float* z, const float* x, const float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}

}  // namespace simt_example

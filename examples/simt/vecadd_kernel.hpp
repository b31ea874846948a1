// z = x + y, one element per thread: the declaration and launch contract, seen by the host
// (simt_vecadd.cpp) and by nvcc (vecadd.cu).
#pragma once

#include <tessera/simt/kernel.hpp>

namespace simt_example {
using namespace tessera::simt;

// Any 1-D block up to 1024 threads; the three vectors have one size.
TESSERA_SIMT_KERNEL(vecadd, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  return contract<1>().block_at_most(1024).require(size<"x"> == size<"z">, size<"y"> == size<"z">);
};

// The same work through raw pointers, as it would be written without Tessera: no contract, so it
// launches only through launch_unchecked. simt_vecadd times both.
TESSERA_SIMT_KERNEL_UNCHECKED(vecadd_raw, float* z, const float* x, const float* y, int64_t n);

}  // namespace simt_example

// The body of scale, compiled ahead of time by nvcc (tessera_add_simt_kernels in CMakeLists.txt).
#include "simt_scale.cuh"

namespace consumer {

TESSERA_SIMT_DEFINE(scale, Index1D i, DisjointSpan<float> out, float a, Span<const float> x) {
  if (auto o = out.at(i)) *o = a * x[i];
}

}  // namespace consumer

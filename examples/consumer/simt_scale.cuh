// out = a * x, one element per thread: the declaration and contract, seen by the host
// (simt_main.cpp) and by nvcc (simt_scale.cu).
#pragma once

#include <tessera/simt/kernel.hpp>

namespace consumer {
using namespace tessera::simt;

TESSERA_SIMT_KERNEL(scale, Index1D i, DisjointSpan<float> out, float a, Span<const float> x) {
  return contract<1>().block_at_most(1024).require(size<"x"> == size<"out">);
};

}  // namespace consumer

// A kernel whose declaration changed after its .cu was compiled (class 6 of issue 10): parameter
// x was an output and is now an input. stale_kernel.cu defines TESSERA_STALE_DECLARATION before
// including this header, as a .cu that was not rebuilt was compiled against the old one.
#pragma once

#include "tessera/simt/kernel.hpp"

namespace safety_stale {
using namespace tessera::simt;

#ifdef TESSERA_STALE_DECLARATION
TESSERA_SIMT_KERNEL(stale_add, Index1D i, DisjointSpan<float> out, DisjointSpan<float> x) {
  return contract<1>();
};
#else
TESSERA_SIMT_KERNEL(stale_add, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};
#endif

}  // namespace safety_stale

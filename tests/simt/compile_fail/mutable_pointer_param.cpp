// expect-error: a checked kernel cannot take a mutable raw pointer
// A raw output pointer would let any thread write any element.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

#ifdef TESSERA_COMPILE_FAIL
TESSERA_SIMT_KERNEL(k, Index1D i, float* out, Span<const float> x) {
  return contract<1>();
};
#else
TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};
#endif

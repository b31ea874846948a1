// expect-error: DisjointSpan has no operator[]
// Indexing an output by a number would let a thread write any element.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  out[i.value()] = 1.0f;
#else
  if (auto o = out.at(i)) *o = 1.0f;
#endif
}

// expect-error: the address of a thread-index witness (or of the Slot of an element it owns)
// A pointer to a witness could be stored in global memory and used after the body, or by another
// thread.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  auto kept = &i;
  if (auto o = out.at(*kept)) *o = 1.0f;
#else
  if (auto o = out.at(i)) *o = 1.0f;
#endif
}

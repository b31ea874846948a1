// expect-error: a thread-index witness (or the Slot of an element it owns) cannot be copied
// Copying a witness: a copy could be stored where it outlives the body, or reach another thread.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  const Index1D kept = i;
#else
  const Index1D& kept = i;
#endif
  if (auto o = out.at(kept)) *o = 1.0f;
}

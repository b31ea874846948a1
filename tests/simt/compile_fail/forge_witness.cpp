// expect-error: a thread-index witness cannot be made by kernel code
// Forging a witness: a thread that made up its own index could write another thread's element.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  const Index1D next(i.value() + 1);
  if (auto o = out.at(next)) *o = 1.0f;
#else
  if (auto o = out.at(i)) *o = 1.0f;
#endif
}

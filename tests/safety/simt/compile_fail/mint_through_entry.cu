// expect-error: is inaccessible
// Class 2: minting a witness through the library's internals from kernel code. Only the kernel
// entry mints one (and a witness holds nothing, so even a minted one names the caller's element).
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan2D<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan2D<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  const auto w = detail::Entry::mint<Index2D>();
  if (auto o = out.at(w)) *o = 1.0f;
#else
  (void)i;
  (void)out;
#endif
}

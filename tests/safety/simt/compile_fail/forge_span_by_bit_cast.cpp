// expect-error: no matching function for call to 'bit_cast
// Class 2: making an output span from a struct of our own (a pointer anywhere, a huge size).
#include <bit>

#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

struct Raw {
  float* data;
  long size;
  unsigned long long kind;
};

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  const auto anywhere = std::bit_cast<DisjointSpan<float>>(Raw{nullptr, 1L << 40, 1});
  if (auto o = anywhere.at(i)) *o = 1.0f;
#else
  if (auto o = out.at(i)) *o = 1.0f;
#endif
}

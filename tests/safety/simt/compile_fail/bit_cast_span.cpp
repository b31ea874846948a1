// expect-error: no matching function for call to 'bit_cast
// Class 2: pulling the raw pointer out of a DisjointSpan with std::bit_cast, to write any element
// through it. A span is not trivially copyable, so bit_cast refuses it. (memcpy or
// reinterpret_cast of its bytes is the byte-level route C++ cannot forbid: docs/safety_simt.md.)
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
  const Raw raw = std::bit_cast<Raw>(out);
  raw.data[12345] = 1.0f;
#else
  if (auto o = out.at(i)) *o = 1.0f;
#endif
}

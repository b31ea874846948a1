// expect-error: lvalue required as unary '&' operand
// Class 2: taking the address of an unchecked load, to keep a pointer into an input.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
#ifdef TESSERA_COMPILE_FAIL
  float* p = const_cast<float*>(&x.load_unchecked(0));
  p[i.value()] = 1.0f;
#endif
  if (auto o = out.at(i)) *o = x.load_unchecked(i.value());
}

// expect-error: invalid 'const_cast' of an rvalue of type 'float'
// Class 2: writing an input through the reference an unchecked load used to return. It returns
// a value now: there is nothing to cast the const away from.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
#ifdef TESSERA_COMPILE_FAIL
  const_cast<float&>(x.load_unchecked(0)) = 42.0f;
#endif
  if (auto o = out.at(i)) *o = x.load_unchecked(i.value());
}

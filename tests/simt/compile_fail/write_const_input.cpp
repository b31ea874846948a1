// expect-error: lvalue required as left operand of assignment || expression is not assignable
// Writing through an input: Span<const T> hands out values, never references. Assigning to a
// value is the language's own error, which GCC and clang word with no words in common.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
#ifdef TESSERA_COMPILE_FAIL
  x[i] = 0.0f;
#else
  if (auto o = out.at(i)) *o = x[i];
#endif
}

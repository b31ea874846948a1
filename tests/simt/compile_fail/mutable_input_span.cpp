// expect-error: an input span is read-only and is written Span<const T>
// A mutable "input" span would be a second way to write the kernel's memory.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

#ifdef TESSERA_COMPILE_FAIL
TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<float> x) {
  return contract<1>();
};
#else
TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};
#endif

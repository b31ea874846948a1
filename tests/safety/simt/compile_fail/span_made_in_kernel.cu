// expect-error: calling a __host__ function
// Class 2: kernel code making its own output span, pointing wherever it likes. The maker of spans
// (detail::SpanAccess) is host code: the launcher's, never the kernel's.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  const auto anywhere = detail::SpanAccess::output<Index1D>(static_cast<float*>(nullptr), 1 << 30);
  if (auto o = anywhere.at(i)) *o = 1.0f;
#else
  if (auto o = out.at(i)) *o = 1.0f;
#endif
}

// expect-error: incomplete type
// Class 2: kernel code setting the registers a witness reads. The simulated registers of the host
// tests do not exist in device code; on the device a witness reads the hardware's.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

TESSERA_SIMT_DEFINE(k, Index1D i, DisjointSpan<float> out) {
#ifdef TESSERA_COMPILE_FAIL
  const detail::SimulatedThread other({{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}});
#endif
  if (auto o = out.at(i)) *o = 1.0f;
}

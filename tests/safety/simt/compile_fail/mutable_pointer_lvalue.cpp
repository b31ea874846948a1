// expect-error: a mutable pointer parameter may be written through: pass the tensor as std::move(t)
// Class 7: an unchecked kernel's mutable pointer bound to a tensor someone else still holds.
#include <tessera/simt/launch.hpp>

using namespace tessera;
using namespace tessera::simt;

TESSERA_SIMT_KERNEL_UNCHECKED(k, float* dst, const float* src, long n);

void run(const Module& m, Tensor<float, 1> d, const Tensor<float, 1>& s) {
  RawLaunchConfig raw;
#ifdef TESSERA_COMPILE_FAIL
  (void)launch_unchecked<k>(m, raw, d, s, 64L);
#else
  (void)launch_unchecked<k>(m, raw, std::move(d), s, 64L);
#endif
}

// expect-error: is written by the launch, which owns it until the GPU is done
// Class 7: passing an output tensor by reference, keeping a handle the host (or another launch)
// could use while the kernel writes it. The launch takes it, as a tile launch takes a partition.
#include <tessera/simt/launch.hpp>

using namespace tessera;
using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};

void run(const Module& m, Tensor<float, 1> z, const Tensor<float, 1>& x) {
#ifdef TESSERA_COMPILE_FAIL
  (void)prepare<k>(m, cover(64, 64))(z, x);
#else
  (void)prepare<k>(m, cover(64, 64))(std::move(z), x);
#endif
}

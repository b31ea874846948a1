// expect-error: an output (DisjointSpan<T>, DisjointSpan2D<T>) is written by the launch
// A const tensor passed for an output: the launch would write what the caller promised not to
// (and, not moved in, it would stay reachable while the kernel writes it).
#include <tessera/simt/launch.hpp>

using namespace tessera;
using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

void run(const Module& m, Tensor<float, 1>& t) {
#ifdef TESSERA_COMPILE_FAIL
  const Tensor<float, 1>& out = t;
  (void)prepare<k>(m, cover(100, 128))(std::move(out));
#else
  Tensor<float, 1>& out = t;
  (void)prepare<k>(m, cover(100, 128))(std::move(out));
#endif
}

// expect-error: this argument is for an input span, but a partition is an output
// Class 7: reading a partition (an output of some launch) as a SIMT input, as the tile path
// refuses for an In.
#include <tessera/simt/launch.hpp>

using namespace tessera;
using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};

void run(const Module& m, Tensor<float, 1> z, Tensor<float, 1> x) {
#ifdef TESSERA_COMPILE_FAIL
  (void)prepare<k>(m, cover(64, 64))(std::move(z), std::move(x).partition({16}));
#else
  (void)prepare<k>(m, cover(64, 64))(std::move(z), x);
#endif
}

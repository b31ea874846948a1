// expect-error: a scalar parameter takes a value that converts to it without narrowing
// A double passed for an int64_t would be truncated silently.
#include <tessera/simt/launch.hpp>

using namespace tessera;
using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out, int64_t n) {
  return contract<1>();
};

void run(const Module& m, Tensor<float, 1> out) {
#ifdef TESSERA_COMPILE_FAIL
  const double n = 100;
#else
  const int n = 100;
#endif
  (void)prepare<k>(m, cover(100, 128))(std::move(out), n);
}

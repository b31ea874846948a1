// expect-error: prepare<K>(config): the config's rank is not the rank of K's contract
// A 2-D config for a 1-D kernel: threads along y would get the same Index1D as their row 0.
#include <tessera/simt/launch.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index1D i, DisjointSpan<float> out) {
  return contract<1>();
};

void run(const Module& m) {
#ifdef TESSERA_COMPILE_FAIL
  (void)prepare<k>(m, LaunchConfig<2>{{{4, 4}}, {{32, 8}}});
#else
  (void)prepare<k>(m, LaunchConfig<1>{{{16}}, {{256}}});
#endif
}

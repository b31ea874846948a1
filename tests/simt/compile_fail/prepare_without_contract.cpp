// expect-error: prepare<K>(): this kernel has no launch contract
// A kernel without a contract launches only through launch_unchecked, whose name says so.
#include <tessera/simt/launch.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL_UNCHECKED(k, float* out, long n);

void run(const Module& m, float* out) {
#ifdef TESSERA_COMPILE_FAIL
  prepare<k>(m, cover(100, 128))(out, 100L);
#else
  RawLaunchConfig raw;
  raw.grid[0] = 1;
  raw.block[0] = 128;
  (void)launch_unchecked<k>(m, raw, out, 100L).sync();
#endif
}

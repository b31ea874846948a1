// The device-side half of the witness guarantee: a launch shape under which two threads would get
// the same Index1D (a 2-D block for a 1-D kernel) is refused by prepare(), and launched anyway
// through launch_unchecked it stops at the kernel entry, before the body runs. A stopped kernel
// leaves the CUDA context unusable, so this is its own executable (kept out of the sanitizer runs,
// which pick executables named *gpu*).
#include <gtest/gtest.h>

#include <string>

#include "tessera/runtime/gpu.hpp"
#include "tessera/simt/simt.hpp"
#include "test_kernels.hpp"

namespace tessera::simt {
namespace {

TEST(SimtFault, ALaunchShapeThatRepeatsAWitnessStopsAtTheEntry) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << "needs a GPU: " << why;
  const Device gpu = Device::cuda(0);
  const Module module = Module::embedded(gpu);
  auto x = ones<float>({64}, gpu);
  auto out = full<float>({64}, 7.0f, gpu);
  RawLaunchConfig raw;
  raw.block[0] = 32;
  raw.block[1] = 2;  // threads (x, 0) and (x, 1) would both be Index1D x
  try {
    (void)launch_unchecked<t_add>(module, raw, std::move(out), x, x).sync();
    FAIL() << "the entry let a 2-D block run a 1-D witness";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("SIMT kernel 't_add' failed"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::simt

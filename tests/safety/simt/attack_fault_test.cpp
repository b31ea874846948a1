// Class 2 of issue 10 on the GPU: a token of another index space than the kernel's witness (made
// through a union) would mix two thread-to-element mappings in one launch; at() stops the kernel,
// and the launch's future reports it. Its own binary: a stopped kernel breaks the context.
#include <gtest/gtest.h>

#include <string>

#include "attack_kernels.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/simt/simt.hpp"

namespace tessera::simt {
namespace {

TEST(SimtGpuAttackFault, AWitnessOfAnotherIndexSpaceStopsTheKernel) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << "needs a GPU: " << why;
  const Device gpu = Device::cuda(0);
  const auto k = prepare<safety_attack::other_index_space>(Module::embedded(gpu),
                                                           LaunchConfig<2>{{{2, 2}}, {{8, 8}}});
  try {
    (void)k(zeros<int>({16, 16}, gpu)).sync();
    FAIL() << "a union-punned TileIndex2D wrote through an Index2D kernel's output";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("SIMT kernel 'other_index_space' failed"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::simt

// Classes 2 and 6 of issue 10 on the GPU: witnesses and Slots passed between threads through
// shared memory write only the receiving thread's element; a witness of another index space
// stops the kernel (its own binary, attack_fault_test.cpp, since a stopped kernel breaks the
// context); and an image built against a stale declaration is refused at prepare, naming the
// parameter. Needs a GPU (label gpu); skips without one.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "attack_kernels.hpp"
#include "stale_kernel.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/simt/simt.hpp"

namespace tessera::simt {
namespace {

class SimtGpuAttack : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!runtime::gpu_usable(&why)) GTEST_SKIP() << "needs a GPU: " << why;
  }
  const Device gpu = Device::cuda(0);
};

// Every element holds the index of the thread it belongs to, and nothing else was written.
void expect_own_elements(const std::vector<int64_t>& got) {
  for (size_t j = 0; j < got.size(); ++j)
    ASSERT_EQ(got[j], static_cast<int64_t>(j))
        << "element " << j << " was written by thread " << got[j];
}

TEST_F(SimtGpuAttack, AWitnessPassedThroughSharedMemoryWritesTheReceiversElement) {
  const int64_t n = 1000;  // ragged: the last block's extra threads own nothing
  const auto k = prepare<safety_attack::shared_witness>(Module::embedded(gpu),
                                                        cover(n, safety_attack::kBlock));
  auto [out] = k(full<int64_t>({n}, -1, gpu)).sync();
  expect_own_elements(out.to_vector());
}

TEST_F(SimtGpuAttack, ASlotPassedThroughSharedMemoryWritesTheReceiversElement) {
  const int64_t n = 1000;
  const auto k =
      prepare<safety_attack::shared_slot>(Module::embedded(gpu), cover(n, safety_attack::kBlock));
  auto [out] = k(full<int64_t>({n}, -1, gpu)).sync();
  expect_own_elements(out.to_vector());
}

TEST_F(SimtGpuAttack, AKernelBuiltAgainstAStaleDeclarationIsRefusedAtPrepare) {
  try {
    (void)prepare<safety_stale::stale_add>(Module::embedded(gpu), cover(64, 64));
    FAIL() << "a kernel compiled with x as an output was prepared with x as an input";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "kernel 'stale_add': parameter 'x' (#3) was compiled in stale_kernel.cu as an "
                  "output DisjointSpan<float>, but the host declares it an input "
                  "Span<const float>"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::simt

// The compile pipeline on a GPU (skips without one): TESSERA_LOG=compile names every stage down to
// the load on the device, and a kernel whose shared-memory plan reuses dead buffers (an mma's
// operands side by side, then a conversion and a reduction in the bytes they left) gives the CPU
// backend's results.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

#include "scoped_env.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// The shape of the codegen corpus's mma_epilogue, whose plan has six buffers, three of them
// reusing bytes of dead ones.
TESSERA_KERNEL(smem_reuse, Out<float> c, In<half> a, In<half> b, In<float> bias) {
  auto x = load(a, {c.tile_index(0), 0}, {32, 20});
  auto y = load(b, {0, c.tile_index(1)}, {20, 24});
  auto acc = mma(x * x, y, Tile<float>::full({32, 24}, 1.0f));
  auto biased = acc * 0.5f + load_like(bias, c);
  c.store(biased - max(biased, 1));
};

std::vector<float> run(Device d) {
  const int64_t m = 64, n = 48, k = 20;
  std::vector<half> as(m * k), bs(k * n);
  std::vector<float> bias(m * n);
  for (size_t i = 0; i < as.size(); ++i) as[i] = half(std::sin(0.3f * static_cast<float>(i)));
  for (size_t i = 0; i < bs.size(); ++i) bs[i] = half(std::cos(0.7f * static_cast<float>(i)));
  for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * static_cast<float>(i % 97);
  auto [c, a_, b_, bias_] =
      smem_reuse(zeros<float>({m, n}, d).partition({32, 24}), from_host(as, {m, k}, d),
                 from_host(bs, {k, n}, d), from_host(bias, {m, n}, d))
          .sync();
  return std::move(c).unpartition().to_vector();
}

TEST(CompilePipelineOnGpu, LogsEveryStageAndTheReusedSharedMemoryGivesTheCpuResults) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const ScopedEnv log("TESSERA_LOG", "compile");
  const ScopedEnv check("TESSERA_NVRTC_CHECK", "");
  testing::internal::CaptureStderr();
  const std::vector<float> gpu = run(Device::cuda(0));
  const std::string err = testing::internal::GetCapturedStderr();
  std::vector<std::string> stages;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) {
    const std::string head = "tessera compile: smem_reuse: ";
    if (l.rfind(head, 0) == 0)
      stages.push_back(l.substr(head.size(), l.find(' ', head.size()) - head.size()));
  }
  const std::vector<std::string> want = {
      "trace", "verify", "promote_locals", "canonical_order", "check_safety", "dce", "lower",
      "nvrtc", "load",   "total"};
  EXPECT_EQ(stages, want) << err;
  EXPECT_TRUE(err.find("nvrtc ") != std::string::npos &&
              (err.find("(compiled)") != std::string::npos ||
               err.find("(JIT cache hit)") != std::string::npos))
      << err;
  EXPECT_NE(err.find("total "), std::string::npos) << err;

  const std::vector<float> cpu = run(Device::cpu());
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    ASSERT_NEAR(gpu[i], cpu[i], 1e-3 * (1.0 + std::abs(cpu[i]))) << "element " << i;
}

}  // namespace
}  // namespace tessera::test

// time_launches on a GPU: the outputs come back right after the ring of async launches, with and
// without the L2 flush, and the time it reports for a copy is physically possible (no launch
// left unwaited: a copy cannot move bytes faster than the GPU's memory).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>
#include <tessera/timing.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(gpu_copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

TEST(TimeLaunchesOnGpu, CopyTimeIsPhysicallyPossibleAndResultsAreRight) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const Device gpu = Device::cuda(0);
  const int64_t n = int64_t{1} << 24;  // 64 MiB each way: more than the L2
  const auto x = full<float>({n}, 2.0f, gpu);
  for (const bool flush : {false, true}) {
    std::vector<Partition<float, 1>> outs;
    for (int i = 0; i < 3; ++i) outs.push_back(zeros<float>({n}, gpu).partition({8192}));
    TimingOptions options;
    options.flush_l2 = flush;
    const Timing t = time_launches([&](Partition<float, 1> z) { return gpu_copy(std::move(z), x); },
                                   outs, options);
    const double tb_per_s = 2.0 * 4.0 * static_cast<double>(n) / (t.median_ms * 1e-3) / 1e12;
    // An H200 moves at most 4.8 TB/s; an A100 2 TB/s.
    EXPECT_LT(tb_per_s, 5.0) << t.str();
    EXPECT_GT(t.median_ms, 0.0) << t.str();
    EXPECT_EQ(t.flush_ms > 0, flush) << t.str();
    ASSERT_EQ(outs.size(), 3u);
    for (auto& out : outs)
      EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(n, 2.0f));
  }
}

}  // namespace
}  // namespace tessera::test

// The autotuner on a GPU: a ragged f16 GEMM tuned among tile shapes of the Hopper pipeline gives
// the CPU backend's result, is timed once per key, and the winner is read back after this process's
// tables are cleared.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>
#include <tessera/tune.hpp>

#include "../runtime/scoped_env.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// A cache folder of this process's own, so the first launch does tune.
struct CacheFolder {
  std::string made;
  CacheFolder() {
    char dir[] = "/tmp/tessera-tune-gpu-test-XXXXXX";
    if (!mkdtemp(dir)) return;
    made = dir;
    setenv("TESSERA_CACHE_DIR", dir, 1);
  }
  ~CacheFolder() {
    std::error_code ignored;
    if (!made.empty()) std::filesystem::remove_all(made, ignored);
  }
} g_cache_folder;

template <int BM, int BN, int BK>
TESSERA_KERNEL(gpu_tgemm, Out<float> c, In<half> a, In<half> b) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  c.store(acc);
};

TEST(TuneOnGpu, ARaggedGemmIsTunedOnceAndMatchesTheCpu) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const Device gpu = Device::cuda(0);
  const int64_t M = 300, N = 200, K = 130;  // ragged for every tile
  std::vector<half> as(M * K), bs(K * N);
  for (int64_t i = 0; i < M * K; ++i) as[i] = half(std::sin(0.01f * static_cast<float>(i)));
  for (int64_t i = 0; i < K * N; ++i) bs[i] = half(std::cos(0.013f * static_cast<float>(i)));
  // Three tile shapes of the Hopper pipeline; whichever wins, the result is the CPU's.
  const auto tuner = tune::candidates(
      "test.gpu.gemm", tune::config("128x256x64", gpu_tgemm<128, 256, 64>, {128, 256}),
      tune::config("128x128x64", gpu_tgemm<128, 128, 64>, {128, 128}),
      tune::config("64x128x32", gpu_tgemm<64, 128, 32>, {64, 128}));
  auto run = [&](Device d) {
    auto [c, a, b] =
        tuner(zeros<float>({M, N}, d), from_host(as, {M, K}, d), from_host(bs, {K, N}, d)).sync();
    return std::move(c).unpartition().to_vector();
  };
  const tune::Stats before = tune::stats();
  const std::vector<float> got = run(gpu);
  EXPECT_EQ(tune::stats().tunings - before.tunings, 1u);
  EXPECT_EQ(tune::stats().candidates_timed - before.candidates_timed +
                tune::stats().candidates_skipped - before.candidates_skipped,
            3u);
  const std::vector<float> want = [&] {
    const ScopedEnv off("TESSERA_TUNE", "off");  // the CPU reference: one candidate, untimed
    return run(Device::cpu());
  }();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-3 * (1 + std::fabs(want[i]))) << i;
  // Again, and after this process forgets: no timing.
  run(gpu);
  tune::forget();
  runtime::JitCache::global().clear_memory();
  run(gpu);
  EXPECT_EQ(tune::stats().tunings - before.tunings, 1u);
  EXPECT_GE(tune::stats().disk_hits - before.disk_hits, 1u);
}

}  // namespace
}  // namespace tessera::test

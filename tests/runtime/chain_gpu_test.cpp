// Chains on a GPU: what pending work writes or reads (Future::chain()) is taken by the next
// launch without the host waiting, and the device orders them; a launch after a failed one fails
// with that one's error. The same properties as chain_test.cpp (the CPU backend), on the device.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(gpu_plus_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};
TESSERA_KERNEL(gpu_twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
TESSERA_KERNEL(gpu_set_to, Out<float> z, Scalar<float> v) {
  z.store(Tile<float>::full(z.shape(), 0.0f) + v);
};
TESSERA_KERNEL(gpu_next_tile, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(0) + 1}, {256}, Pad::none()));
};

// Large enough that a launch takes longer than issuing the next one.
constexpr int64_t kN = int64_t{1} << 24;

std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 1000);
  return v;
}
std::vector<float> mapped(const std::vector<float>& v, float mul, float add) {
  std::vector<float> out;
  out.reserve(v.size());
  for (float x : v) out.push_back(x * mul + add);
  return out;
}

#define SKIP_WITHOUT_GPU()                               \
  do {                                                   \
    std::string why;                                     \
    if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why; \
  } while (0)

TEST(GpuChain, PipelineOfEightDependentLaunchesComputesTheComposition) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  Tensor<float, 1> t = from_host(iota(kN), gpu);
  for (int i = 0; i < 8; ++i) {
    auto [z, in] = gpu_plus_one(zeros<float>({kN}, gpu).partition({4096}), std::move(t)).chain();
    t = std::move(z).unpartition();
  }
  EXPECT_EQ(t.to_vector(), mapped(iota(kN), 1, 8));
}

TEST(GpuChain, ReadAfterWriteWriteAfterReadAndWriteAfterWriteAreOrdered) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  auto x = from_host(iota(kN), gpu);
  // RAW: h = 2x, then y = h + 1.
  auto [h, x1] = gpu_twice(zeros<float>({kN}, gpu).partition({4096}), x).chain();
  Tensor<float, 1> ht = std::move(h).unpartition();
  auto [y, h1] = gpu_plus_one(zeros<float>({kN}, gpu).partition({4096}), ht).chain();
  h1 = Tensor<float, 1>();
  // WAR: ht is overwritten after the pending read above.
  auto [w, v] = gpu_set_to(std::move(ht).partition({4096}), 7.0f).chain();
  // WAW: then overwritten again.
  auto [w2, v2] = gpu_set_to(std::move(w), 9.0f).chain();
  EXPECT_EQ(std::move(y).unpartition().to_vector(), mapped(iota(kN), 2, 1));
  EXPECT_EQ(std::move(w2).unpartition().to_vector(), std::vector<float>(kN, 9.0f));
}

TEST(GpuChain, ALaunchAfterAFailedOneFailsWithALaunchErrorQuotingIt) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  auto x = from_host(iota(kN), gpu);
  auto [bad, x1] = gpu_next_tile(zeros<float>({kN}, gpu).partition({256}), x).chain();
  auto f = gpu_plus_one(zeros<float>({kN}, gpu).partition({256}), std::move(bad).unpartition());
  const std::string m = error_of<LaunchError>([&] { (void)std::move(f).sync(); });
  const std::string rest = std::regex_replace(m, std::regex(R"( \(defined at [^)]*\))"), "");
  const std::string prefix =
      "kernel 'gpu_plus_one' was ordered after a launch of kernel 'gpu_next_tile' that writes "
      "memory it reads or writes, and that launch failed, so this one's results hold nothing "
      "valid: \"";
  EXPECT_EQ(rest.substr(0, prefix.size()), prefix);
  EXPECT_NE(m.find("unpadded load from 'x'"), std::string::npos) << m;
  // The twin: an x long enough for the last block's read.
  auto longer = from_host(iota(kN + 256), gpu);
  auto [good, l1] = gpu_next_tile(zeros<float>({kN}, gpu).partition({256}), longer).chain();
  auto [z, g] =
      gpu_plus_one(zeros<float>({kN}, gpu).partition({256}), std::move(good).unpartition()).sync();
  std::vector<float> expected = iota(kN + 256);
  expected.erase(expected.begin(), expected.begin() + 256);
  EXPECT_EQ(std::move(z).unpartition().to_vector(), mapped(expected, 1, 1));
}

TEST(GpuChain, DroppingIntermediateResultsDoesNotWaitAndKeepsResultsRight) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  auto x = from_host(iota(kN), gpu);
  Tensor<float, 1> t = x;
  for (int i = 0; i < 4; ++i) {
    auto [z, in] = gpu_twice(zeros<float>({kN}, gpu).partition({4096}), t).chain();
    t = std::move(z).unpartition();  // the previous intermediate is freed behind its readers
  }
  EXPECT_EQ(t.to_vector(), mapped(iota(kN), 16, 0));
}

}  // namespace
}  // namespace tessera::test

// Launches with an Accum parameter: the tensor is taken like a partition (the only handle, owned
// by the launch until it is done), is reachable through no other argument, and gives the grid
// when no Out partition does; every other output keeps its own rules. On the CPU backend the
// adds happen in the documented order, so a sum is the same bits on every run.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// Every block adds its tile of x into the first 8 elements of h.
TESSERA_KERNEL(fold, Accum<float> h, In<float> x) {
  h.add(load(x, {tile_index(0)}, {8}), {0});
};
// An Out and an Accum in one launch: z gets its own tile of x, h the sum of all of them.
TESSERA_KERNEL(copy_and_fold, Out<float> z, Accum<float> h, In<float> x) {
  const Tile<float> t = load_like(x, z);
  z.store(t);
  h.add(t, {0});
};

TEST(AccumLaunch, AddsEveryBlocksTileOntoTheInitialValues) {
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  auto h = ones<float>({8}, Device::cpu());
  auto [h1, x1] = fold(std::move(h).accumulate({4}), from_host(x, Device::cpu())).sync();
  const std::vector<float> got = std::move(h1).tensor().to_vector();
  for (size_t e = 0; e < 8; ++e)
    EXPECT_EQ(got[e], 1.0f + x[e] + x[e + 8] + x[e + 16] + x[e + 24]) << e;
}

TEST(AccumLaunch, TheOutPartitionsGiveTheGridWhenTheAccumDeclaresNone) {
  auto x = ones<float>({24}, Device::cpu());
  auto [z, h, x1] = copy_and_fold(zeros<float>({24}, Device::cpu()).partition({8}),
                                  zeros<float>({8}, Device::cpu()).accumulate(), x)
                        .sync();
  EXPECT_EQ(std::move(h).tensor().to_vector(), std::vector<float>(8, 3.0f));
  EXPECT_EQ(std::move(z).unpartition().to_vector(), std::vector<float>(24, 1.0f));
}

TEST(AccumLaunch, AGridThatDisagreesWithTheOutPartitionsIsRefused) {
  auto x = ones<float>({24}, Device::cpu());
  auto z = zeros<float>({24}, Device::cpu()).partition({8});
  auto h = zeros<float>({8}, Device::cpu()).accumulate({2});
  const std::string m =
      error_of<LaunchError>([&] { (void)copy_and_fold(std::move(z), std::move(h), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'copy_and_fold': argument 2 ('h', Accum) declares a grid of [2] blocks, but "
            "argument 1 ('z', Out) is cut into [3]; the arguments of one launch share its grid "
            "(accumulate() with no grid follows the Out partitions')");
  // Refused before anything was taken: the arguments are still the caller's.
  auto [z1, h1, x1] =
      copy_and_fold(std::move(z), zeros<float>({8}, Device::cpu()).accumulate(),
                    x)  // NOLINT(bugprone-use-after-move): a refused launch keeps it
          .sync();
  EXPECT_EQ(std::move(h1).tensor().to_vector(), std::vector<float>(8, 3.0f));
}

TEST(AccumLaunch, NoOutAndNoDeclaredGridIsRefused) {
  auto x = ones<float>({16}, Device::cpu());
  auto h = zeros<float>({8}, Device::cpu()).accumulate();
  const std::string m = error_of<LaunchError>([&] { (void)fold(std::move(h), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'fold': it has no Out parameter and no Accum that declares a grid; the "
            "launch grid comes from the partitions of its outputs, or from "
            "std::move(t).accumulate(grid), so a kernel needs one of them");
}

TEST(AccumLaunch, AccumulateNeedsTheOnlyHandle) {
  auto h = zeros<float>({8}, Device::cpu());
  auto copy = h;
  const std::string m = error_of<OwnershipError>([&] { (void)std::move(h).accumulate({1}); });
  EXPECT_EQ(after_location(m),
            "accumulate() needs the only handle to the tensor's storage, but 2 handles share it "
            "(copies, views, or launches still reading it); drop the other handles, or sync the "
            "launches, first");
}

TEST(AccumLaunch, ANonPositiveGridIsRefused) {
  auto h = zeros<float>({8}, Device::cpu());
  const std::string m = error_of<UsageError>([&] { (void)std::move(h).accumulate({2, 0}); });
  EXPECT_EQ(after_location(m),
            "accumulate(): grid [2, 0] has a non-positive extent; give each axis's block count");
}

// Two wraps of one buffer are two storages: only the launch's address check sees the alias.
TEST(AccumLaunch, AnAccumAliasingAnInOfTheSameLaunchIsRefused) {
  std::vector<float> buffer(32, 1.0f);
  auto acc = wrap_unowned_unchecked(buffer.data(), {8});
  auto in = wrap_unowned_unchecked(buffer.data(), {32});
  auto h = std::move(acc).accumulate({4});
  const std::string m = error_of<OwnershipError>([&] { (void)fold(std::move(h), in); });
  EXPECT_EQ(after_location(m),
            "kernel 'fold': argument 1 ('h', Accum) overlaps argument 2 ('x', In) in memory; an "
            "output may not be reachable through another argument, or tiles would race with "
            "reads of it");
  // The twin: a disjoint part of the same buffer launches.
  std::vector<float> other(8, 0.0f);
  auto [h1, in1] = fold(wrap_unowned_unchecked(other.data(), {8}).accumulate({4}), in).sync();
  EXPECT_EQ(other, std::vector<float>(8, 4.0f));
}

TEST(AccumLaunch, AnAccumAliasingAnOutOfTheSameLaunchIsRefused) {
  std::vector<float> buffer(24, 0.0f);
  auto out = wrap_unowned_unchecked(buffer.data(), {24});
  auto acc = wrap_unowned_unchecked(buffer.data() + 16, {8});
  auto x = ones<float>({24}, Device::cpu());
  auto z = std::move(out).partition({8});
  auto h = std::move(acc).accumulate();
  const std::string m =
      error_of<OwnershipError>([&] { (void)copy_and_fold(std::move(z), std::move(h), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'copy_and_fold': argument 1 ('z', Out) overlaps argument 2 ('h', Accum) in "
            "memory; an output may not be reachable through another argument, or tiles would "
            "race with reads of it");
}

// The CPU backend adds in row-major block order: f32 sums of values of very different
// magnitudes come out the same bits on every run, and equal the sum in that order.
TEST(AccumLaunch, TheCpuBackendsSumIsInTheDocumentedOrder) {
  constexpr int kBlocks = 64;
  std::vector<float> x(8 * kBlocks);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = (i % 3 == 0 ? 1e7f : 1.0f) * static_cast<float>((i * 2654435761u) % 1000) / 7.0f;
  std::vector<float> want(8, 0.0f);
  for (int b = 0; b < kBlocks; ++b)
    for (size_t e = 0; e < 8; ++e) want[e] += x[static_cast<size_t>(b) * 8 + e];
  for (int run = 0; run < 3; ++run) {
    auto [h, x1] =
        fold(zeros<float>({8}, Device::cpu()).accumulate({kBlocks}), from_host(x, Device::cpu()))
            .sync();
    const std::vector<float> got = std::move(h).tensor().to_vector();
    EXPECT_EQ(std::memcmp(got.data(), want.data(), sizeof(float) * 8), 0) << "run " << run;
  }
}

}  // namespace
}  // namespace tessera::test

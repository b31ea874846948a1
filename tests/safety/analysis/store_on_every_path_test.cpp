// Class 11 of issue 10: "no output tile silently keeps stale contents" is proved, not checked by
// syntax. A store counts only where it runs on every path: unconditional at the top level, in
// both branches of an if_, or in a for_range whose constant bounds prove it runs at least once.
// And dead-code elimination keeps an unused unpadded load, whose bounds check is the only thing
// that reports a tile reaching outside its tensor. Each attack has a twin that runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

int g_line = 0;
template <class F>
void at(int line, F&& f) {
  g_line = line;
  f();
}

const char* const kSomePaths =
    "kernel '{}' stores to its Out parameter 'z' only on some paths (under an if_ without a "
    "store in both branches, or in a for_range that may run zero times), so some of its tiles "
    "could keep whatever they held before; store to it unconditionally, outside the if_ or the "
    "loop (select the value with where(), or carry it out of the loop)";

std::string some_paths(const std::string& kernel) {
  std::string m = kSomePaths;
  return m.replace(m.find("{}"), 2, kernel);
}

// Attack: only block 0 stores; the other blocks' tiles keep what they held.
TESSERA_KERNEL(store_under_if, Out<float> z) {
  if_(z.tile_index(0) == 0,
      [&] { at(__LINE__, [&] { z.store(Tile<float>::full(z.shape(), 1.0f)); }); });
};
// Twin: both branches store, so every block writes its tile.
TESSERA_KERNEL(store_in_both_branches, Out<float> z) {
  if_(
      z.tile_index(0) == 0, [&] { z.store(Tile<float>::full(z.shape(), 1.0f)); },
      [&] { z.store(Tile<float>::full(z.shape(), 2.0f)); });
};

TEST(StoreOnEveryPath, AStoreUnderAnIfWithoutElseIsRejectedAtItsLine) {
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  g_line = 0;
  const std::string m = error_of<KernelError>([&] { (void)store_under_if(std::move(z)); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m), some_paths("store_under_if"));
}

TEST(StoreOnEveryPath, AStoreInBothBranchesOfAnIfWritesEveryTile) {
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  auto [out] = store_in_both_branches(std::move(z)).sync();
  std::vector<float> want(16, 2.0f);
  for (int i = 0; i < 8; ++i) want[i] = 1.0f;
  EXPECT_EQ(std::move(out).unpartition().to_vector(), want);
}

// Attack: the store sits in a loop bounded by a value computed at run time (n may be 0).
TESSERA_KERNEL(store_in_runtime_loop, Out<float> z, Scalar<int32_t> n) {
  for_range(0, n, [&](Index) { z.store(Tile<float>::full(z.shape(), 1.0f)); });
};
// Attack: a loop that provably never runs.
TESSERA_KERNEL(store_in_zero_trip_loop, Out<float> z) {
  for_range(3, 3, [&](Index) { z.store(Tile<float>::full(z.shape(), 1.0f)); });
};
// Attack: the loop counts down, so its body never runs.
TESSERA_KERNEL(store_in_backward_loop, Out<float> z) {
  for_range(4, 0, [&](Index) { z.store(Tile<float>::full(z.shape(), 1.0f)); });
};
// Twin: constant bounds that run the body at least once.
TESSERA_KERNEL(store_in_constant_loop, Out<float> z) {
  for_range(0, 2, [&](Index i) { z.store(i.cast<float>().broadcast_to(z.shape())); });
};
// Twin: the loop computes the value, the store comes after it, unconditionally.
TESSERA_KERNEL(store_after_runtime_loop, Out<float> z, Scalar<int32_t> n) {
  Tile<float> acc = Tile<float>::zeros(z.shape());
  for_range(0, n, [&](Index) { acc = acc + 1.0f; });
  z.store(acc);
};

TEST(StoreOnEveryPath, AStoreInALoopThatMayRunZeroTimesIsRejected) {
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  EXPECT_EQ(
      after_location(error_of<KernelError>([&] { (void)store_in_runtime_loop(std::move(z), 0); })),
      some_paths("store_in_runtime_loop"));
}

TEST(StoreOnEveryPath, AStoreInAZeroTripLoopIsRejected) {
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  EXPECT_EQ(
      after_location(error_of<KernelError>([&] { (void)store_in_zero_trip_loop(std::move(z)); })),
      some_paths("store_in_zero_trip_loop"));
}

TEST(StoreOnEveryPath, AStoreInALoopThatCountsDownIsRejected) {
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  EXPECT_EQ(
      after_location(error_of<KernelError>([&] { (void)store_in_backward_loop(std::move(z)); })),
      some_paths("store_in_backward_loop"));
}

TEST(StoreOnEveryPath, AStoreInALoopWithConstantBoundsThatRunsWritesEveryTile) {
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  auto [out] = store_in_constant_loop(std::move(z)).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(16, 1.0f));
}

TEST(StoreOnEveryPath, AStoreAfterARuntimeLoopWritesEveryTileEvenWhenTheLoopRunsZeroTimes) {
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  auto out = std::get<0>(store_after_runtime_loop(std::move(z), 0).sync());
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(16, 0.0f));
  auto z3 = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  auto out3 = std::get<0>(store_after_runtime_loop(std::move(z3), 3).sync());
  EXPECT_EQ(std::move(out3).unpartition().to_vector(), std::vector<float>(16, 3.0f));
}

// Attack: an unpadded load past the tensor whose tile nothing uses; dead-code elimination must
// not remove it and its bounds check with it.
TESSERA_KERNEL(unused_unpadded_load, Out<float> z, In<float> x) {
  at(__LINE__, [&] { (void)load(x, {z.tile_index(0) + 1}, {8}, Pad::none()); });
  z.store(Tile<float>::zeros(z.shape()));
};

TEST(DeadCodeKeepsBoundsChecks, AnUnusedUnpaddedLoadPastTheTensorIsStillABoundsError) {
  auto x = ones<float>({16}, Device::cpu());
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  g_line = 0;
  auto future = unused_unpadded_load(std::move(z), x);
  const std::string m = error_of<BoundsError>([&] { (void)std::move(future).sync(); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m),
            "unpadded load from 'x' at tile [2] of shape [8] reaches element 16 along axis 0, "
            "outside the tensor's extent 16; load with padding (the default) to read past the "
            "edge");
}

TEST(DeadCodeKeepsBoundsChecks, AnUnusedUnpaddedLoadInsideTheTensorRuns) {
  auto x = ones<float>({24}, Device::cpu());
  auto z = full<float>({16}, -1.0f, Device::cpu()).partition({8});
  auto [out, in] = unused_unpadded_load(std::move(z), x).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(16, 0.0f));
}

}  // namespace
}  // namespace tessera::test

// Launch rules: the grid comes from the output partitions (ceil(extent / tile) per axis, ragged
// edges masked), outputs agree on it, declared ranks are checked, and an unpadded load past the
// tensor is a BoundsError at the user's line.
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

// Each element gets the linear id of the block that wrote it.
TESSERA_KERNEL(block_ids, Out<int32_t, 2> z) {
  auto id = z.tile_index(0) * z.num_tiles(1) + z.tile_index(1);
  z.store(id.broadcast_to(z.shape()));
};

TESSERA_KERNEL(fill_both, Out<float> a, Out<float> b) {
  a.store(Tile<float>::full(a.shape(), 1.0f));
  b.store(Tile<float>::full(b.shape(), 2.0f));
};

TESSERA_KERNEL(first_row, Out<float> z, In<float, 2> x) {
  z.store(load(x, {0, z.tile_index(0)}, {1, 8}).reshape({8}));
};

// Each block reads the tile after its own, unpadded: the last block reads past the end of x.
TESSERA_KERNEL(next_tile, Out<float> z, In<float> x) {
  at(__LINE__, [&] { z.store(load(x, {z.tile_index(0) + 1}, {8}, Pad::none())); });
};

TESSERA_KERNEL(no_output, In<float> x) {
  (void)load(x, {0}, {4});
};

TEST(Grid, IsCeilOfExtentOverTilePerAxisAndEdgeTilesAreMasked) {
  auto z = full<int32_t>({10, 7}, -1, Device::cpu()).partition({4, 3});
  EXPECT_EQ(z.grid(), (Shape{3, 3}));
  auto [out] = block_ids(std::move(z)).sync();
  const std::vector<int32_t> ids = std::move(out).unpartition().to_vector();
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 7; ++j) EXPECT_EQ(ids[i * 7 + j], (i / 4) * 3 + j / 3) << i << ", " << j;
}

TEST(Grid, OneDimensionalRaggedGrid) {
  EXPECT_EQ(zeros<float>({1000}, Device::cpu()).partition({128}).grid(), Shape{8});
  EXPECT_EQ(zeros<float>({1024}, Device::cpu()).partition({128}).grid(), Shape{8});
  EXPECT_EQ(zeros<float>({1025}, Device::cpu()).partition({128}).grid(), Shape{9});
  EXPECT_EQ(zeros<float>({5}, Device::cpu()).partition({128}).grid(), Shape{1});
}

TEST(Grid, OutputsWithDifferentGridsAreRejected) {
  auto a = zeros<float>({16}, Device::cpu()).partition({8});  // grid [2]
  auto b = zeros<float>({16}, Device::cpu()).partition({4});  // grid [4]
  const std::string m = error_of<LaunchError>([&] { (void)fill_both(std::move(a), std::move(b)); });
  EXPECT_EQ(after_location(m),
            "kernel 'fill_both': argument 2 ('b', Out) is cut into a grid of [4] tiles, but "
            "argument 1 ('a', Out) into [2]; the outputs of one launch share its grid");
}

TEST(Grid, OutputsWithDifferentTilesButOneGridLaunch) {
  auto a = zeros<float>({16}, Device::cpu()).partition({8});   // grid [2]
  auto b = zeros<float>({32}, Device::cpu()).partition({16});  // grid [2]
  auto [ra, rb] = fill_both(std::move(a), std::move(b)).sync();
  EXPECT_EQ(std::move(ra).unpartition().to_vector(), std::vector<float>(16, 1.0f));
  EXPECT_EQ(std::move(rb).unpartition().to_vector(), std::vector<float>(32, 2.0f));
}

TEST(Launch, KernelWithoutAnOutputIsRejected) {
  auto x = ones<float>({4}, Device::cpu());
  EXPECT_EQ(after_location(error_of<LaunchError>([&] { (void)no_output(x); })),
            "kernel 'no_output': it has no Out parameter; the launch grid comes from the "
            "partitions of its outputs, so a kernel needs at least one");
}

TEST(Launch, DynamicRankTensorOfTheWrongRankIsRejected) {
  Tensor<float> x = ones<float>({8}, Device::cpu());  // rank 1, not known at compile time
  auto z = zeros<float>({8}, Device::cpu()).partition({8});
  const std::string m = error_of<LaunchError>([&] { (void)first_row(std::move(z), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'first_row': argument 2 ('x', In) has rank 1, but the kernel declares rank 2");
  // The twin: a dynamic-rank tensor of rank 2.
  std::vector<float> rows(3 * 8);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i);
  Tensor<float> x2 = from_host(rows, {3, 8}, Device::cpu());
  auto z2 = zeros<float>({8}, Device::cpu()).partition({8});
  auto [out, in] = first_row(std::move(z2), x2).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(),
            std::vector<float>(rows.begin(), rows.begin() + 8));
}

TEST(Launch, DynamicRankPartitionOfTheWrongRankIsRejected) {
  Tensor<int32_t> t = zeros<int32_t>({8}, Device::cpu());
  Partition<int32_t> z = std::move(t).partition(Shape{4});  // rank 1; block_ids declares 2
  const std::string m = error_of<LaunchError>([&] { (void)block_ids(std::move(z)); });
  EXPECT_EQ(after_location(m),
            "kernel 'block_ids': argument 1 ('z', Out) has rank 1, but the kernel declares rank 2");
}

TEST(Bounds, UnpaddedLoadPastTheTensorIsABoundsErrorAtTheUsersLineOnSync) {
  auto x = ones<float>({16}, Device::cpu());
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  g_line = 0;
  auto future = next_tile(std::move(z), x);  // the launch itself succeeds; the work fails
  const std::string m = error_of<BoundsError>([&] { (void)std::move(future).sync(); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m),
            "unpadded load from 'x' at tile [2] of shape [8] reaches element 16 along axis 0, "
            "outside the tensor's extent 16; load with padding (the default) to read past the "
            "edge");
}

TEST(Bounds, UnpaddedLoadThatStaysInsideRuns) {
  std::vector<float> xs(24);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i);
  auto x = from_host(xs, Device::cpu());
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  auto [out, in] = next_tile(std::move(z), x).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(xs.begin() + 8, xs.end()));
}

TEST(Launch, ParameterNamesComeFromTheKernelsParameterList) {
  EXPECT_EQ(runtime::parameter_names("Out<float, 2> z, In<Foo<int, 3>> x, Scalar<float> alpha", 3),
            (std::vector<std::string>{"z", "x", "alpha"}));
  EXPECT_EQ(runtime::parameter_names("Out<float> z", 2), (std::vector<std::string>{"z", "arg1"}));
}


TEST(FutureOwnership, ASyncedOrMovedFromFutureIsAnOwnershipError) {
  auto future = fill_both(zeros<float>({8}, Device::cpu()).partition({4}),
                          zeros<float>({8}, Device::cpu()).partition({4}));
  auto kept = std::move(future);
  EXPECT_THROW((void)future.ready(), OwnershipError);  // NOLINT(bugprone-use-after-move)
  auto args = std::move(kept).sync();
  EXPECT_THROW(kept.wait(), OwnershipError);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(std::move(std::get<0>(args)).unpartition().to_vector(), std::vector<float>(8, 1.0f));
}

TESSERA_KERNEL(fill_ones, Out<float> z) { z.store(Tile<float>::full(z.shape(), 1.0f)); };
TESSERA_KERNEL(fill_twos, Out<float> z) { z.store(Tile<float>::full(z.shape(), 2.0f)); };

// Takes the kernel by value, as a helper would: both calls put their copy at the same stack
// address.
template <class K>
[[gnu::noinline]] std::vector<float> run_copy(K kernel) {
  auto [z] = kernel(zeros<float>({8}, Device::cpu()).partition({4})).sync();
  return std::move(z).unpartition().to_vector();
}

TEST(KernelIdentity, CopiesOfTwoKernelsWithOneSignatureRunTheirOwnCode) {
  // The specialization cache is keyed on the kernel's body, not on the object's address, so a
  // copy of one kernel never picks up another's compiled code.
  EXPECT_EQ(run_copy(fill_ones), std::vector<float>(8, 1.0f));
  EXPECT_EQ(run_copy(fill_twos), std::vector<float>(8, 2.0f));
  auto local = fill_ones;
  EXPECT_EQ(run_copy(local), std::vector<float>(8, 1.0f));
}

}  // namespace
}  // namespace tessera::test

// A gather whose row index lies outside its tensor is a BoundsError at the user's line naming
// the index and where it sits in the index tile; an unpadded gather whose columns reach past the
// edge names the element; the same gathers with valid indices run.
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

// z [N, 4]: row i is row ids[i] of x, columns [shift, shift + 4), unpadded when Unpadded.
template <bool Unpadded>
TESSERA_KERNEL(rows_of, Out<float> z, In<float> x, In<int32_t> ids, Scalar<int32_t> shift) {
  const Tile<int32_t> rows = load(ids, {tile_index(0)}, {2});
  const Pad pad = Unpadded ? Pad::none() : Pad::zero();
  at(__LINE__, [&] { z.store(gather(x, rows, {shift}, {2, 4}, pad)); });
};

// x [3, 4] holding 10 r + c.
Tensor<float> table() {
  std::vector<float> xs;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) xs.push_back(static_cast<float>(10 * r + c));
  return from_host(xs, {3, 4}, Device::cpu());
}

TEST(GatherBounds, ARowIndexOutsideTheTensorIsABoundsErrorNamingTheIndex) {
  const auto ids = from_host(std::vector<int32_t>{2, 0, 1, 3}, Device::cpu());
  auto z = zeros<float>({4, 4}, Device::cpu()).partition({2, 4});
  g_line = 0;
  auto future = rows_of<false>(std::move(z), table(), ids, 0);
  const std::string m = error_of<BoundsError>([&] { (void)std::move(future).sync(); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m),
            "gather from 'x': row index 3 (element 1 of the index tile) is outside the tensor's "
            "extent 3 along axis 0; clamp the indices to [0, 3) or select a valid row first");
}

TEST(GatherBounds, ANegativeRowIndexIsABoundsErrorToo) {
  const auto ids = from_host(std::vector<int32_t>{-1, 0}, Device::cpu());
  auto z = zeros<float>({2, 4}, Device::cpu()).partition({2, 4});
  auto future = rows_of<false>(std::move(z), table(), ids, 0);
  const std::string m = error_of<BoundsError>([&] { (void)std::move(future).sync(); });
  EXPECT_EQ(after_location(m),
            "gather from 'x': row index -1 (element 0 of the index tile) is outside the tensor's "
            "extent 3 along axis 0; clamp the indices to [0, 3) or select a valid row first");
}

TEST(GatherBounds, AnUnpaddedGatherPastTheLastColumnNamesTheElement) {
  const auto ids = from_host(std::vector<int32_t>{2, 0}, Device::cpu());
  auto z = zeros<float>({2, 4}, Device::cpu()).partition({2, 4});
  g_line = 0;
  auto future = rows_of<true>(std::move(z), table(), ids, 1);
  const std::string m = error_of<BoundsError>([&] { (void)std::move(future).sync(); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m),
            "unpadded gather from 'x' at row 2 reaches element 4 along axis 1, outside the "
            "tensor's extent 4; gather with padding (the default) to read past the edge");
}

TEST(GatherBounds, ValidIndicesGatherTheirRows) {
  const auto ids = from_host(std::vector<int32_t>{2, 0, 1, 2}, Device::cpu());
  auto z = zeros<float>({4, 4}, Device::cpu()).partition({2, 4});
  auto [out, x, i, shift] = rows_of<true>(std::move(z), table(), ids, 0).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(),
            (std::vector<float>{20, 21, 22, 23, 0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}));
}

}  // namespace
}  // namespace tessera::test

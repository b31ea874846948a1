// Tensors on the host: creation, partition/unpartition, slices as views, and their usage errors.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(copy2d, Out<float, 2> z, In<float, 2> x) {
  z.store(load_like(x, z));
};
TESSERA_KERNEL(iota2d, Out<float, 2> z) {
  // Element (i, j) of the tensor gets 100 * i + j.
  const Shape& s = z.shape();
  auto row =
      (z.tile_index(0) * static_cast<int32_t>(s[0])).broadcast_to(s) + Tile<int32_t>::iota(s, 0);
  auto col =
      (z.tile_index(1) * static_cast<int32_t>(s[1])).broadcast_to(s) + Tile<int32_t>::iota(s, 1);
  z.store((row * 100 + col).cast<float>());
};

std::vector<float> iota_vector(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(Tensor, CreationFillsAndReportsShape) {
  EXPECT_EQ(zeros<float>({2, 3}, Device::cpu()).to_vector(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(ones<int32_t>({4}, Device::cpu()).to_vector(), std::vector<int32_t>(4, 1));
  EXPECT_EQ(full<double>({3}, 2.5, Device::cpu()).to_vector(), std::vector<double>(3, 2.5));
  EXPECT_EQ(arange<float>(5, Device::cpu()).to_vector(), iota_vector(5));
  auto t = from_host(iota_vector(12), {3, 4}, Device::cpu());
  EXPECT_EQ(t.shape(), (Shape{3, 4}));
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.numel(), 12);
  EXPECT_EQ(t.dim(1), 4);
  EXPECT_EQ(t.device(), Device::cpu());
  EXPECT_EQ(t.to_vector(), iota_vector(12));
}

TEST(Tensor, HalfTensorsHoldSixteenBitElements) {
  auto t = full<half>({4}, half(1.5f), Device::cpu());
  EXPECT_EQ(t.handle().storage()->bytes(), 4 * sizeof(uint16_t));
  for (half h : t.to_vector()) EXPECT_EQ(h.bits, half(1.5f).bits);
}

TEST(Tensor, FromHostWithTheWrongCountIsAUsageError) {
  EXPECT_EQ(after_location(error_of<UsageError>(
                [] { (void)from_host(std::vector<float>(3), {4}, Device::cpu()); })),
            "from_host: 3 values for a tensor of shape [4] (4 elements)");
}

TEST(Tensor, CopiesShareStorage) {
  auto t = zeros<float>({4}, Device::cpu());
  auto u = t;
  EXPECT_EQ(t.handle().storage(), u.handle().storage());
  EXPECT_EQ(t.handle().use_count(), 2);
}

TEST(Partition, RoundTripKeepsTheStorageAndTheData) {
  auto t = from_host(iota_vector(10), {10}, Device::cpu());
  const runtime::Storage* storage = t.handle().storage();
  auto p = std::move(t).partition({4});
  EXPECT_TRUE(t.empty());  // NOLINT(bugprone-use-after-move): the test uses it on purpose
  EXPECT_EQ(p.shape(), Shape{10});
  EXPECT_EQ(p.tile_shape(), Shape{4});
  EXPECT_EQ(p.grid(), Shape{3});
  EXPECT_EQ(p.storage(), storage);
  auto back = std::move(p).unpartition();
  EXPECT_EQ(back.handle().storage(), storage);
  EXPECT_EQ(back.handle().use_count(), 1);
  EXPECT_EQ(back.to_vector(), iota_vector(10));
}

TEST(Partition, TileOfTheWrongRankOrSizeIsAUsageError) {
  Tensor<float> t = zeros<float>({4, 4}, Device::cpu());
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)std::move(t).partition(Shape{4}); })),
            "partition(): tile shape [4] has 1 axes, but the tensor [4, 4] has 2");
  EXPECT_EQ(after_location(error_of<UsageError>([&] {
              (void)std::move(t).partition({4, 0});
            })),
            "partition(): tile shape [4, 0] has a non-positive extent");
  EXPECT_NO_THROW((void)std::move(t).partition({4, 4}));
}

TEST(Slice, IsAViewThatSharesStorageAndReadsStrided) {
  auto t = from_host(iota_vector(24), {4, 6}, Device::cpu());
  auto cols = t.slice(1, 2, 5);  // columns 2, 3, 4 of every row
  EXPECT_EQ(cols.shape(), (Shape{4, 3}));
  EXPECT_EQ(cols.handle().storage(), t.handle().storage());
  EXPECT_EQ(t.handle().use_count(), 2);
  EXPECT_FALSE(cols.handle().contiguous());
  EXPECT_EQ(cols.to_vector(), (std::vector<float>{2, 3, 4, 8, 9, 10, 14, 15, 16, 20, 21, 22}));
  auto block = cols.slice(0, 1, 3);  // rows 1, 2 of those columns
  EXPECT_EQ(block.to_vector(), (std::vector<float>{8, 9, 10, 14, 15, 16}));
}

TEST(Slice, KernelsReadAStridedViewAsAnInput) {
  auto t = from_host(iota_vector(24), {4, 6}, Device::cpu());
  auto cols = t.slice(1, 2, 5);
  auto z = zeros<float>({4, 3}, Device::cpu()).partition({2, 2});  // ragged along axis 1
  auto [out, in] = copy2d(std::move(z), cols).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), cols.to_vector());
}

TEST(Slice, KernelsWriteThroughAPartitionedViewOnlyInsideIt) {
  auto t = full<float>({4, 6}, -1.0f, Device::cpu());
  auto view = t.slice(1, 1, 4);  // columns 1..3
  t = Tensor<float, 2>();        // the view is now the only handle, so it may be partitioned
  auto [out] = iota2d(std::move(view).partition({3, 2})).sync();
  // Columns 0, 4 and 5 of the storage were not written.
  auto whole = std::move(out).unpartition();
  EXPECT_EQ(whole.to_vector(),
            (std::vector<float>{0, 1, 2, 100, 101, 102, 200, 201, 202, 300, 301, 302}));
  const float* base = whole.unchecked_data() - 1;  // the view starts at column 1 of the storage
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(base[i * 6 + 0], -1.0f) << i;
    EXPECT_EQ(base[i * 6 + 4], -1.0f) << i;
    EXPECT_EQ(base[i * 6 + 5], -1.0f) << i;
    for (int j = 1; j < 4; ++j) EXPECT_EQ(base[i * 6 + j], static_cast<float>(100 * i + j - 1));
  }
}

TEST(Slice, OutsideTheExtentIsAUsageError) {
  auto t = zeros<float>({6}, Device::cpu());
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)t.slice(0, 2, 9); })),
            "slice [2, 9) of axis 0 is outside its extent 6");
  EXPECT_EQ(after_location(error_of<UsageError>([&] { (void)t.slice(1, 0, 1); })),
            "slice along axis 1 of a tensor of rank 1");
}

TEST(Device, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:3").index(), 3);
  EXPECT_EQ(Device::cuda(2).str(), "cuda:2");
  for (const char* bad : {"gpu", "cuda:", "cuda:-1", "cuda:1x", ""})
    EXPECT_EQ(error_of<UsageError>([&] { (void)Device::parse(bad); }),
              tessera::detail::cat("'", bad, "' is not a device; write cpu, cuda or cuda:N"));
}

TEST(Device, DefaultIsTheCpuWhenTesseraDeviceSaysSo) {
  EXPECT_EQ(default_device(), Device::cpu());
}

}  // namespace
}  // namespace tessera::test

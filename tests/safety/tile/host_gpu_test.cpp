// Classes 1 and 3 of issue 10 on the GPU (the twins of host_back_door_test.cpp and
// host_overflow_test.cpp): a driver out-of-memory is an OutOfMemoryError naming the size and the
// device; escaped GPU storage is not partitioned, a copy of it is, and kernels write it; a tile
// larger than the tensor is one block that writes every element.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(gpu_doubled, Out<float> z, In<float> x) { z.store(load_like(x, z) * 2.0f); };

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// Attack: 2^40 f32 elements (4 TiB), more than any GPU holds.
TEST(GpuHost, AnAllocationTheGpuCannotMakeIsAnOutOfMemoryErrorNamingSizeAndDevice) {
  const std::string m = error_of<OutOfMemoryError>(
      [] { (void)empty<float>({int64_t{1} << 40}, Device::cuda(0)); });
  EXPECT_EQ(after_location(m),
            "out of memory: 4398046511104 bytes could not be allocated on cuda:0; use smaller "
            "tensors, or free some first");
}
// Twin: a tensor that fits is allocated and filled.
TEST(GpuHost, AnAllocationThatFitsIsMadeAndFilled) {
  auto t = full<float>({int64_t{1} << 20}, 3.0f, Device::cuda(0));
  const std::vector<float> v = t.to_vector();
  EXPECT_EQ(v.size(), size_t{1} << 20);
  EXPECT_EQ(v.front(), 3.0f);
  EXPECT_EQ(v.back(), 3.0f);
}

// Attack: the device pointer of an output taken before partitioning.
TEST(GpuHost, AnEscapedGpuTensorIsNotPartitioned) {
  auto t = zeros<float>({256}, Device::cuda(0));
  (void)t.unchecked_data();
  EXPECT_NE(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({64}); }))
                .find("its address was handed out by unchecked_data()"),
            std::string::npos);
}
// Twin: its copy is partitioned and written by a kernel on the GPU; the escaped tensor is read.
TEST(GpuHost, ACopyOfAnEscapedGpuTensorIsWrittenAndTheEscapedOneRead) {
  auto x = from_host(iota(256), {256}, Device::cuda(0));
  (void)x.unchecked_data();
  auto out = zeros<float>({256}, Device::cuda(0));
  (void)out.unchecked_data();
  auto [z, x1] = gpu_doubled(out.to(out.device()).partition({64}), x).sync();
  const std::vector<float> v = std::move(z).unpartition().to_vector();
  for (int i = 0; i < 256; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], 2.0f * i) << i;
}

// A tile larger than the tensor: one block, every element written (a wrapped tile count would
// have launched none).
TEST(GpuHost, ATileLargerThanTheTensorIsOneBlockThatWritesEveryElement) {
  auto x = from_host(iota(1000), {1000}, Device::cuda(0));
  auto z = full<float>({1000}, -1.0f, Device::cuda(0)).partition({4096});
  EXPECT_EQ(z.grid(), Shape{1});
  auto [z1, x1] = gpu_doubled(std::move(z), x).sync();
  const std::vector<float> v = std::move(z1).unpartition().to_vector();
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(v[static_cast<size_t>(i)], 2.0f * i) << i;
}

}  // namespace
}  // namespace tessera::test

// GPU memory and copies: round trips keep every byte, the pool keeps freed memory for reuse, and
// tensors live on the GPU under the same API as on the CPU.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include <tessera/tessera.hpp>

#include "gpu_test_util.hpp"
#include "tessera/backend/cuda/context.hpp"
#include "tessera/backend/cuda/memory.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

std::vector<unsigned char> random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

using GpuMemory = GpuTest;

TEST_F(GpuMemory, HostToDeviceToHostKeepsEveryByte) {
  const auto host = random_bytes((size_t{1} << 20) + 3, 1);  // odd size
  DeviceBuffer b(gpu(), host);
  EXPECT_EQ(b.download<unsigned char>(), host);
}

TEST_F(GpuMemory, DeviceToDeviceCopyKeepsEveryByte) {
  const auto host = random_bytes(12345, 2);
  DeviceBuffer a(gpu(), host);
  DeviceBuffer b(gpu(), host.size());
  runtime::gpu_copy_on_device(gpu(), b.data(), a.data(), host.size());
  EXPECT_EQ(b.download<unsigned char>(), host);
}

TEST_F(GpuMemory, ZeroByteAllocationsAreDistinctAddresses) {
  DeviceBuffer a(gpu(), 0), b(gpu(), 0);
  EXPECT_NE(a.data(), nullptr);
  EXPECT_NE(a.data(), b.data());
}

TEST_F(GpuMemory, PoolKeepsFreedMemoryForReuse) {
  const auto& ctx = backend::cuda::device_context(0);
  if (!ctx.pool()) GTEST_SKIP() << "this GPU has no stream-ordered memory pool";
  const size_t bytes = size_t{256} << 20;
  { DeviceBuffer big(gpu(), bytes); }
  runtime::gpu_synchronize(gpu());
  // With the default release threshold (0) the pool would hand the memory back at the sync.
  EXPECT_GE(backend::cuda::pool_reserved_bytes(ctx), bytes);
}

TEST_F(GpuMemory, TensorsOnTheGpuRoundTripThroughTheTensorApi) {
  std::vector<float> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = 0.25f * static_cast<float>(i) - 7.0f;
  auto t = from_host(data, {40, 25}, gpu());
  EXPECT_TRUE(t.device().is_cuda());
  EXPECT_EQ(t.to_vector(), data);
  EXPECT_EQ(t.to(Device::cpu()).to_vector(), data);
  auto z = zeros<float>({7}, gpu());
  EXPECT_EQ(z.to_vector(), std::vector<float>(7, 0.0f));
}

// full() fills on the GPU: a memset for 1-, 2- and 4-byte elements and for 8-byte ones whose
// halves agree, doubling device copies otherwise. Every element, odd counts included, holds it.
template <class T>
void expect_full_holds(T value, int64_t n) {
  auto t = full<T>({n}, value, Device::cuda(0));
  const std::vector<T> got = t.to_vector();
  ASSERT_EQ(got.size(), static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(std::memcmp(&got[i], &value, sizeof(T)), 0) << "element " << i << " of " << n;
}

TEST_F(GpuMemory, FullFillsEveryElementOnTheDevice) {
  for (int64_t n : {1, 7, 1000003}) {
    expect_full_holds<int8_t>(-3, n);
    expect_full_holds<half>(half(1.5f), n);
    expect_full_holds<bfloat16>(bfloat16(-2.25f), n);
    expect_full_holds<float>(3.25f, n);
    expect_full_holds<int32_t>(-123456, n);
    expect_full_holds<double>(1.5, n);        // halves differ: the doubling copies
    expect_full_holds<int64_t>(-1, n);        // halves agree: a 32-bit memset
    expect_full_holds<int64_t>(int64_t{1} << 40, n);
  }
  EXPECT_EQ(zeros<float>({5}, Device::cuda(0)).to_vector(), std::vector<float>(5, 0.0f));
}

}  // namespace

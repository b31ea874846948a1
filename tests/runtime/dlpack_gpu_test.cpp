// DLPack with GPU memory: a CUDA tensor exported by to_dlpack describes device memory on the
// right GPU, and imported back (the same storage, its only handle) it is an output a kernel
// writes in place. Skips without a GPU.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(gpu_dl_add, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};

TEST(DLPackOnGpu, AnExportedGpuTensorIsAnOutputWhenImportedBack) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const Device gpu = Device::cuda(0);
  const int64_t n = (int64_t{1} << 20) + 5;  // a ragged last tile
  // The export holds the only handle once the temporary is gone.
  DLManagedTensor* lent = to_dlpack(full<float>({n}, -1.0f, gpu));
  EXPECT_EQ(lent->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(lent->dl_tensor.device.device_id, 0);
  auto borrowed = from_dlpack<float, 1>(lent);
  EXPECT_EQ(borrowed.device(), gpu);
  EXPECT_EQ(borrowed.handle().use_count(), 1);
  auto x = arange<float>(n, gpu);
  auto y = full<float>({n}, 0.5f, gpu);
  auto [z, x1, y1] = gpu_dl_add(std::move(borrowed).partition({4096}), x, y).sync();
  const std::vector<float> out = std::move(z).unpartition().to_vector();
  for (int64_t i : {int64_t{0}, int64_t{1}, n / 2, n - 1})
    EXPECT_EQ(out[static_cast<size_t>(i)], static_cast<float>(i) + 0.5f) << i;
}

}  // namespace
}  // namespace tessera::test

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

// A producer that reuses its memory in a stream's order (PyTorch's caching allocator on its current
// stream): borrowed with that stream, launched on it, the producer's deleter runs as soon as the
// last handle goes (the host does not wait for the launch), and an export for a consumer on that
// stream is ordered on the device. The kernel's result, read after the stream, is right.
TEST(DLPackOnGpu, ABorrowedTensorWithAStreamIsHandedBackInThatStreamsOrder) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const Device gpu = Device::cuda(0);
  const Stream user(gpu);  // stands for the producer's (torch's) stream
  const int64_t n = (int64_t{1} << 22) + 3;
  // The producer's memory: another tensor's, lent through a hand-made DLManagedTensor whose
  // deleter counts its calls.
  auto source = arange<float>(n, gpu);
  struct Lent {
    DLManagedTensor managed{};
    int64_t shape[1];
    int deleted = 0;
  } lent;
  lent.shape[0] = n;
  DLTensor& t = lent.managed.dl_tensor;
  t.data = source.unchecked_data();
  t.device = {kDLCUDA, 0};
  t.ndim = 1;
  t.dtype = {kDLFloat, 32, 1};
  t.shape = lent.shape;
  lent.managed.manager_ctx = &lent;
  lent.managed.deleter = [](DLManagedTensor* self) {
    ++static_cast<Lent*>(self->manager_ctx)->deleted;
  };
  DLManagedTensor* out = nullptr;
  {
    StreamScope on(user);
    auto y = full<float>({n}, 0.5f, gpu);
    // Borrowed as a temporary: a launch copies an In's handle (std::move of a named tensor would
    // leave the caller's), so the one it hands back, x1, is then the last.
    auto [z, x1, y1] = gpu_dl_add(empty<float>({n}, gpu).partition({4096}),
                                  from_dlpack_unchecked<float, 1>(&lent.managed, user), y)
                           .chain();
    x1 = Tensor<float, 1>();
    EXPECT_EQ(lent.deleted, 1);  // handed back at once, in the stream's order
    out = to_dlpack(std::move(z).unpartition(), user);
  }
  // The consumer reads on `user`: a kernel there copies the export into a fresh tensor.
  auto back = from_dlpack<float, 1>(out);  // Tessera's own export: the same storage again
  const std::vector<float> got = back.to_vector();
  for (int64_t i : {int64_t{0}, int64_t{1}, n / 2, n - 1})
    EXPECT_EQ(got[static_cast<size_t>(i)], static_cast<float>(i) + 0.5f) << i;
}

}  // namespace
}  // namespace tessera::test

// Streams on a GPU: launches on different streams that touch the same storage are ordered on the
// device (events), whichever hazard: read after write, write after read, write after write; a
// foreign CUstream can be adopted and launched on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/backend/cuda/context.hpp>
#include <tessera/backend/cuda/driver.hpp>
#include <tessera/runtime/gpu.hpp>
#include <tessera/runtime/stream.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(sgpu_twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
TESSERA_KERNEL(sgpu_set_to, Out<float> z, Scalar<float> v) {
  z.store(Tile<float>::full(z.shape(), 0.0f) + v);
};

// Large enough that a launch takes longer than queueing the next one on the other stream.
constexpr int64_t kN = int64_t{1} << 25;

#define SKIP_WITHOUT_GPU()                               \
  do {                                                   \
    std::string why;                                     \
    if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why; \
  } while (0)

TEST(GpuStream, ReadAfterWriteOnAnotherStreamWaitsForTheWriter) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream a(gpu), b(gpu);
  auto x = full<float>({kN}, 3.0f, gpu);
  Tensor<float, 1> h;
  {
    const StreamScope on(a);
    auto [p, x1] = sgpu_twice(zeros<float>({kN}, gpu).partition({4096}), x).chain();
    h = std::move(p).unpartition();
  }
  const StreamScope on(b);
  auto [y, h1] = sgpu_twice(zeros<float>({kN}, gpu).partition({4096}), h).sync();
  EXPECT_EQ(std::move(y).unpartition().to_vector(), std::vector<float>(kN, 12.0f));
}

TEST(GpuStream, WriteAfterReadOnAnotherStreamWaitsForTheReader) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream a(gpu), b(gpu);
  auto x = full<float>({kN}, 3.0f, gpu);
  Tensor<float, 1> copied;
  Tensor<float, 1> overwritten;
  {
    const StreamScope on(a);
    auto [p, x1] = sgpu_twice(zeros<float>({kN}, gpu).partition({4096}), x).chain();
    copied = std::move(p).unpartition();
    x = std::move(x1);  // the only handle again: the pending read is not one
  }
  {
    const StreamScope on(b);
    auto [w, v] = sgpu_set_to(std::move(x).partition({4096}), 7.0f).chain();
    overwritten = std::move(w).unpartition();
  }
  EXPECT_EQ(copied.to_vector(), std::vector<float>(kN, 6.0f));  // read before the write
  EXPECT_EQ(overwritten.to_vector(), std::vector<float>(kN, 7.0f));
}

TEST(GpuStream, WriteAfterWriteOnAnotherStreamLeavesTheLaterValues) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream a(gpu), b(gpu);
  auto x = full<float>({kN}, 3.0f, gpu);
  Partition<float, 1> p = zeros<float>({kN}, gpu).partition({4096});
  {
    const StreamScope on(a);
    auto [p1, x1] = sgpu_twice(std::move(p), x).chain();
    p = std::move(p1);
  }
  const StreamScope on(b);
  auto [q, v] = sgpu_set_to(std::move(p), 9.0f).sync();
  EXPECT_EQ(std::move(q).unpartition().to_vector(), std::vector<float>(kN, 9.0f));
}

TEST(GpuStream, IndependentLaunchesOnTwoStreamsBothComplete) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream a(gpu), b(gpu);
  auto x = full<float>({kN}, 1.5f, gpu);
  auto fa = [&] {
    const StreamScope on(a);
    return sgpu_twice(zeros<float>({kN}, gpu).partition({4096}), x);
  }();
  auto fb = [&] {
    const StreamScope on(b);
    return sgpu_set_to(zeros<float>({kN}, gpu).partition({4096}), 4.0f);
  }();
  auto [za, xa] = std::move(fa).sync();
  auto [zb, vb] = std::move(fb).sync();
  EXPECT_EQ(std::move(za).unpartition().to_vector(), std::vector<float>(kN, 3.0f));
  EXPECT_EQ(std::move(zb).unpartition().to_vector(), std::vector<float>(kN, 4.0f));
}

TEST(GpuStream, AForeignStreamCanBeAdoptedAndLaunchedOn) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const backend::cuda::DeviceContext& ctx = backend::cuda::device_context(0);
  ctx.make_current();
  CUstream foreign = nullptr;  // as another library would make it
  ASSERT_EQ(backend::cuda::driver().cuStreamCreate(&foreign, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  {
    const Stream adopted = Stream::adopt_unchecked(gpu, foreign);
    EXPECT_EQ(adopted.native(), static_cast<void*>(foreign));
    auto x = full<float>({kN}, 2.0f, gpu);
    const StreamScope on(adopted);
    EXPECT_EQ(runtime::current_stream(gpu), static_cast<void*>(foreign));
    auto [z, x1] = sgpu_twice(zeros<float>({kN}, gpu).partition({4096}), x).sync();
    EXPECT_EQ(std::move(z).unpartition().to_vector(), std::vector<float>(kN, 4.0f));
  }
  // Tessera never destroys an adopted stream: its owner does.
  EXPECT_EQ(backend::cuda::driver().cuStreamDestroy(foreign), CUDA_SUCCESS);
}

}  // namespace
}  // namespace tessera::test

// A gather's row index outside its tensor on the GPU: the kernel reads the pad for it, never
// outside the tensor, and the launch fails with a BoundsError naming the index; its twin with
// valid indices gathers the same rows as the CPU backend. Skips without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(gpu_rows_of, Out<float> z, In<float> x, In<int32_t> ids) {
  z.store(gather(x, load(ids, {tile_index(0)}, {2}), {0}, {2, 4}));
};

Tensor<float> table(Device d) {
  std::vector<float> xs;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) xs.push_back(static_cast<float>(10 * r + c));
  return from_host(xs, {3, 4}, d);
}

TEST(GatherGpu, ARowIndexOutsideTheTensorIsReportedAndNeverRead) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const Device gpu = Device::cuda(0);
  // 1 << 28: far past the table, so a read there would fault rather than pass unnoticed.
  const auto ids = from_host(std::vector<int32_t>{2, 0, 1, 1 << 28}, gpu);
  auto z = zeros<float>({4, 4}, gpu).partition({2, 4});
  std::string message;
  try {
    (void)gpu_rows_of(std::move(z), table(gpu), ids).sync();
  } catch (const BoundsError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("gather from 'x' (tile shape [2, 4]) in tile block 1 has row index "
                         "268435456, outside the tensor's extent 3 along axis 0"),
            std::string::npos)
      << message;
}

TEST(GatherGpu, ValidIndicesGatherWhatTheCpuGathers) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const std::vector<int32_t> rows{2, 0, 1, 2, 0, 0};
  auto run = [&](Device d) {
    auto [out, x, i] =
        gpu_rows_of(zeros<float>({6, 4}, d).partition({2, 4}), table(d), from_host(rows, d)).sync();
    return std::move(out).unpartition().to(Device::cpu()).to_vector();
  };
  EXPECT_EQ(run(Device::cuda(0)), run(Device::cpu()));
}

}  // namespace
}  // namespace tessera::test

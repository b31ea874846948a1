// Streams on the CPU backend: a stream is only a name there (the workers order launches by
// storage alone), so launches made under a StreamScope run and keep every hazard ordered; and the
// errors of adopting a foreign stream that cannot be one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/runtime/stream.hpp>
#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(stream_twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};

TEST(Stream, LaunchesOnTwoCpuStreamsStayOrderedByTheStorageTheyShare) {
  const Stream a(Device::cpu()), b(Device::cpu());
  auto x = full<float>({4096}, 3.0f, Device::cpu());
  Tensor<float, 1> h;
  {
    const StreamScope on(a);
    auto [p, x1] = stream_twice(zeros<float>({4096}, Device::cpu()).partition({64}), x).chain();
    h = std::move(p).unpartition();
  }
  const StreamScope on(b);
  auto [y, h1] = stream_twice(zeros<float>({4096}, Device::cpu()).partition({64}), h).sync();
  EXPECT_EQ(std::move(y).unpartition().to_vector(), std::vector<float>(4096, 12.0f));
}

TEST(Stream, ACpuStreamIsNoDeviceStream) {
  const Stream s(Device::cpu());
  const StreamScope on(s);
  EXPECT_EQ(s.native(), nullptr);
  EXPECT_EQ(runtime::current_stream(Device::cpu()), nullptr);
  EXPECT_EQ(s.device(), Device::cpu());
}

TEST(Stream, AdoptingAForeignStreamForTheCpuIsRefused) {
  int not_a_stream = 0;
  EXPECT_EQ(
      error_of<UsageError>([&] { (void)Stream::adopt_unchecked(Device::cpu(), &not_a_stream); }),
      "Stream::adopt_unchecked: cpu is not a GPU; a foreign stream is a CUstream of a GPU, "
      "and the CPU needs none: use Stream(Device::cpu())");
  // The twin: a CPU stream is made, not adopted.
  EXPECT_EQ(Stream(Device::cpu()).device(), Device::cpu());
}

TEST(Stream, AdoptingTheNullStreamIsRefused) {
  EXPECT_EQ(error_of<UsageError>([] { (void)Stream::adopt_unchecked(Device::cuda(0), nullptr); }),
            "Stream::adopt_unchecked: the CUstream is null (the legacy default stream); pass a "
            "stream made with cuStreamCreate (or PyTorch's torch.cuda.current_stream().cuda_stream "
            "when it is not the default one)");
}

}  // namespace
}  // namespace tessera::test

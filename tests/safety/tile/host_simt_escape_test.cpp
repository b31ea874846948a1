// Class 1 of issue 10, on the SIMT path: a tensor whose address escaped (Tensor::unchecked_data())
// is not written by a SIMT launch either. DisjointSpan outputs and mutable pointer parameters
// follow the tile path's rule (the only handle, and no raw pointer the checks cannot count), while
// inputs may be escaped storage. A fake driver stands in for the GPU (tests/simt/fake_driver.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "runtime/expect_error.hpp"
#include "tessera/simt/launch.hpp"
#include "tessera/tessera.hpp"
#include "test_kernels.hpp"

namespace tessera::simt {
namespace {

using testing::FakeDriver;

using test::error_of;

template <class T, size_t N>
Tensor<T, static_cast<int>(N)> on_gpu(std::vector<T>& host, const int64_t (&shape)[N]) {
  return wrap_unowned_unchecked(host.data(), shape, Device::cuda(0));
}

class HostSimtEscape : public ::testing::Test {
 protected:
  void SetUp() override {
    fake.device.name = "Fake H200";
    fake.device.cc = {9, 0};
  }
  Module module() {
    return Module::nvrtc<SIMT_TEST_KERNELS>(kTestKernelsSource, "test_kernels.cuh");
  }

  FakeDriver fake;
  detail::ScopedDriverBridge installed{fake};
  std::vector<float> o = std::vector<float>(64, 0), x = std::vector<float>(64, 1),
                     y = std::vector<float>(64, 2);
};

// Attack: the output's address taken before the launch, to be written by another thread while
// the kernel writes it.
TEST_F(HostSimtEscape, AnEscapedOutputIsRefusedBeforeAnythingIsMoved) {
  auto out = on_gpu(o, {64});
  auto xs = on_gpu(x, {64});
  auto ys = on_gpu(y, {64});
  float* kept = out.unchecked_data();
  ASSERT_NE(kept, nullptr);
  const auto add = prepare<t_add>(module(), cover(64, 64));
  const std::string m = error_of<OwnershipError>([&] { (void)add(std::move(out), xs, ys); });
  EXPECT_EQ(m,
            "kernel 't_add': output 'out' needs the only handle to its tensor's storage, but its "
            "address was handed out by unchecked_data(), and a raw pointer is a handle the checks "
            "cannot count; kernels may read this tensor but not write it: pass a copy instead, "
            "t.to(t.device()).");
  EXPECT_TRUE(fake.launches.empty());
  EXPECT_FALSE(out.empty());  // NOLINT(bugprone-use-after-move): refused, so not moved
}
// Twin: the same launch with an output whose address never escaped runs.
TEST_F(HostSimtEscape, AnOutputWhoseAddressNeverEscapedIsLaunched) {
  const auto add = prepare<t_add>(module(), cover(64, 64));
  auto [out, x1, y1] = add(on_gpu(o, {64}), on_gpu(x, {64}), on_gpu(y, {64})).sync();
  EXPECT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(out.handle().address(), reinterpret_cast<uintptr_t>(o.data()));
}
// Escaped storage may be read: an input whose address escaped is launched.
TEST_F(HostSimtEscape, AnEscapedInputIsLaunched) {
  auto xs = on_gpu(x, {64});
  (void)xs.unchecked_data();
  const auto add = prepare<t_add>(module(), cover(64, 64));
  auto [out, x1, y1] = add(on_gpu(o, {64}), xs, on_gpu(y, {64})).sync();
  EXPECT_EQ(fake.launches.size(), 1u);
}

// Attack: an escaped tensor bound to a mutable pointer parameter of an unchecked kernel, which may
// write through it.
TEST_F(HostSimtEscape, AnEscapedTensorForAMutablePointerIsRefused) {
  auto d = on_gpu(o, {64});
  auto s = on_gpu(x, {64});
  (void)d.unchecked_data();
  RawLaunchConfig raw;
  raw.grid[0] = 1;
  raw.block[0] = 64;
  const std::string m = error_of<OwnershipError>([&] {
    (void)launch_unchecked<t_raw_copy>(module(), raw, std::move(d), s, int64_t{64});
  });
  EXPECT_NE(m.find("kernel 't_raw_copy': output 'dst' needs the only handle to its tensor's "
                   "storage, but its address was handed out by unchecked_data()"),
            std::string::npos)
      << m;
  EXPECT_TRUE(fake.launches.empty());
}
// Twin: the same launch with a tensor that never escaped.
TEST_F(HostSimtEscape, ATensorThatNeverEscapedIsBoundToAMutablePointer) {
  RawLaunchConfig raw;
  raw.grid[0] = 1;
  raw.block[0] = 64;
  (void)launch_unchecked<t_raw_copy>(module(), raw, on_gpu(o, {64}), on_gpu(x, {64}), int64_t{64})
      .sync();
  EXPECT_EQ(fake.launches.size(), 1u);
}

}  // namespace
}  // namespace tessera::simt

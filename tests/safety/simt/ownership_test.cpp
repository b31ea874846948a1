// Class 7 of issue 10: one ownership model for the tile and SIMT paths. A SIMT output follows the
// tile path's Out rules (the only handle to its storage, or a partition; OwnershipError
// otherwise), a SIMT launch returns the tile path's Future, which owns the arguments until the GPU
// is done, and a launch refused by a check has moved nothing. A fake driver stands in for the GPU
// (tests/simt/fake_driver.hpp); its launches can stay pending until the test says the GPU is done.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "tessera/simt/launch.hpp"
#include "tessera/tessera.hpp"
#include "test_kernels.hpp"

namespace safety_kernels {
using namespace tessera::tile;
TESSERA_KERNEL(twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
}  // namespace safety_kernels

namespace tessera::simt {
namespace {

using testing::FakeDriver;

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error of the expected type)";
}

template <class T, size_t N>
Tensor<T, static_cast<int>(N)> on_gpu(std::vector<T>& host, const int64_t (&shape)[N]) {
  return wrap_unowned_unchecked(host.data(), shape, Device::cuda(0));
}

class SimtOwnership : public ::testing::Test {
 protected:
  void SetUp() override {
    fake.device.name = "Fake H200";
    fake.device.cc = {9, 0};
    fake.asynchronous = true;  // launches stay pending until waited for
  }
  Module module() {
    return Module::nvrtc<SIMT_TEST_KERNELS>(kTestKernelsSource, "test_kernels.cuh");
  }

  FakeDriver fake;
  detail::ScopedDriverBridge installed{fake};
  std::vector<float> o = std::vector<float>(64, 0), x = std::vector<float>(64, 1),
                     y = std::vector<float>(64, 2);
};

TEST_F(SimtOwnership, AnOutputSharedWithACopyIsRefusedLikeATilePartition) {
  auto out = on_gpu(o, {64});
  auto xs = on_gpu(x, {64});
  auto ys = on_gpu(y, {64});
  const auto add = prepare<t_add>(module(), cover(64, 64));
  const Tensor<float, 1> copy = out;  // a second handle: another thread could read it meanwhile
  const std::string e = error_of<OwnershipError>([&] { (void)add(std::move(out), xs, ys); });
  EXPECT_NE(e.find("kernel 't_add': output 'out' needs the only handle to its tensor's storage, "
                   "but 2 handles share it (copies, views, or launches still reading it)"),
            std::string::npos)
      << e;
  EXPECT_TRUE(fake.launches.empty());
  // The tile path says the same of the same tensor.
  Tensor<float, 1> again = out;  // NOLINT(bugprone-use-after-move): refused, so not moved
  EXPECT_THROW((void)std::move(again).partition(Shape{16}), OwnershipError);
}

TEST_F(SimtOwnership, TheOnlyHandleOrAPartitionIsAcceptedAndComesBackFromSync) {
  auto xs = on_gpu(x, {64});
  auto ys = on_gpu(y, {64});
  const auto add = prepare<t_add>(module(), cover(64, 64));
  auto [out, x1, y1] = add(on_gpu(o, {64}), xs, ys).sync();
  EXPECT_EQ(out.handle().address(), reinterpret_cast<uintptr_t>(o.data()));
  auto [part, x2, y2] = add(std::move(out).partition({16}), xs, ys).sync();
  EXPECT_EQ(part.tile_shape(), Shape{16});
  EXPECT_EQ(fake.launches.size(), 2u);
}

TEST_F(SimtOwnership, AViewOfTheOutputCannotBeReadWhileTheKernelWritesIt) {
  auto out = on_gpu(o, {64});
  auto ys = on_gpu(y, {64});
  const auto add = prepare<t_add>(module(), cover(32, 32));
  auto view = out.slice(0, 0, 32);  // shares the output's storage
  const std::string e =
      error_of<OwnershipError>([&] { (void)add(out.slice(0, 32, 64), view, ys.slice(0, 0, 32)); });
  EXPECT_NE(e.find("output 'out' needs the only handle to its tensor's storage"), std::string::npos)
      << e;
}

TEST_F(SimtOwnership, APendingSimtLaunchsInputCannotBecomeAnOutput) {
  auto xs = on_gpu(x, {64});
  auto ys = on_gpu(y, {64});
  const auto add = prepare<t_add>(module(), cover(64, 64));
  auto pending = add(on_gpu(o, {64}), xs, ys).async();  // holds a handle to xs until done
  EXPECT_FALSE(pending.ready());
  std::vector<float> o2(64);
  const std::string e = error_of<OwnershipError>(
      [&] { (void)add(std::move(xs), on_gpu(o2, {64}), ys); });  // would write what it reads
  EXPECT_NE(e.find("output 'out' needs the only handle"), std::string::npos) << e;
  // The twin: once the first launch is synced, xs is the only handle again.
  (void)std::move(pending).sync();
  EXPECT_NO_THROW((void)add(std::move(xs), on_gpu(o2, {64}), ys).sync());  // NOLINT
}

TEST_F(SimtOwnership, APendingTileLaunchsInputCannotBecomeASimtOutput) {
  // What a pending tile launch holds of an In argument: a handle, in its Future (the CPU backend
  // finishes at once, but the Future keeps its arguments until it is synced or dropped).
  auto read = ones<float>({64}, Device::cpu());
  auto tile =
      safety_kernels::twice(zeros<float>({64}, Device::cpu()).partition({16}), read).async();
  const auto add = prepare<t_add>(module(), cover(64, 64));
  auto xs = on_gpu(x, {64});
  auto ys = on_gpu(y, {64});
  const std::string e = error_of<OwnershipError>([&] { (void)add(std::move(read), xs, ys); });
  EXPECT_NE(e.find("output 'out' needs the only handle to its tensor's storage, but 2 handles "
                   "share it"),
            std::string::npos)
      << e;
  // The twin: synced, the tile launch lets go, and the SIMT launch gets past ownership to the
  // next rule (this tensor is on the CPU, and SIMT kernels run on GPUs).
  (void)std::move(tile).sync();
  EXPECT_NE(error_of<UsageError>([&] { (void)add(std::move(read), xs, ys); })  // NOLINT
                .find("is on cpu, but the kernel runs on cuda:0"),
            std::string::npos);
}

TEST_F(SimtOwnership, ALaunchRefusedByACheckMovesNothing) {
  std::vector<float> short_x(63, 1);
  auto out = on_gpu(o, {64});
  auto xs = on_gpu(short_x, {63});
  auto ys = on_gpu(y, {64});
  const auto add = prepare<t_add>(module(), cover(64, 64));
  EXPECT_THROW((void)add(std::move(out), xs, std::move(ys)), LaunchError);
  EXPECT_FALSE(out.empty());  // NOLINT(bugprone-use-after-move): refused before the move
  EXPECT_FALSE(ys.empty());   // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(fake.launches.empty());
}

TEST_F(SimtOwnership, TheFutureKeepsItsInputsAliveAndReportsItsOwnLaunchsError) {
  auto ys = on_gpu(y, {64});
  const auto add = prepare<t_add>(module(), cover(64, 64));
  {
    fake.fail_next = "the kernel trapped";
    auto failing = add(on_gpu(o, {64}), on_gpu(x, {64}), ys).async();
    EXPECT_EQ(ys.handle().use_count(), 2);  // the caller's and the pending launch's
    std::vector<float> o2(64), x2(64);
    auto fine = add(on_gpu(o2, {64}), on_gpu(x2, {64}), ys).async();
    EXPECT_EQ(ys.handle().use_count(), 3);
    EXPECT_NO_THROW((void)std::move(fine).sync());
    EXPECT_NE(
        error_of<BackendError>([&] { (void)std::move(failing).sync(); }).find("the kernel trapped"),
        std::string::npos);
  }
  // Both futures gone (the failed one let go when it was destroyed): ys is the only handle.
  EXPECT_EQ(ys.handle().use_count(), 1);
}

TEST_F(SimtOwnership, AMutablePointerOfAnUncheckedKernelFollowsTheSameRule) {
  auto dst = on_gpu(o, {64});
  auto src = on_gpu(x, {64});
  RawLaunchConfig raw;
  raw.block[0] = 64;
  const Tensor<float, 1> reader = dst;
  EXPECT_NE(error_of<OwnershipError>([&] {
              (void)launch_unchecked<t_raw_copy>(module(), raw, std::move(dst), src, int64_t{64});
            }).find("needs the only handle"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::simt

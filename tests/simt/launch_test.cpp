// prepare<K>() and launches, end to end on the CPU: a fake driver bridge stands in for the GPU (its
// limits are made up, its launches recorded), and "device" tensors wrap host memory labelled
// cuda:0, so the recorded argument pack can be decoded and its spans used as the kernel would.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "tessera/runtime/graph.hpp"
#include "tessera/simt/launch.hpp"
#include "test_kernels.hpp"

namespace tessera::simt {
namespace {

using testing::FakeDriver;

std::string kernel_source() {
  return kTestKernelsSource;
}

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

// The pack of the recorded launch, as the entry receives it.
template <class K>
detail::PackOf<K> pack_of(const FakeDriver::Launch& l) {
  detail::PackOf<K> pack;
  EXPECT_EQ(l.args.size(), sizeof pack);
  // (The bytes the driver would copy into the kernel's parameter, as the device receives them.)
  std::memcpy(static_cast<void*>(&pack), l.args.data(), sizeof pack);
  return pack;
}

// Thread x of a 1-D launch of one 1024-thread block.
detail::HardwareIds thread(unsigned x) {
  return {{x, 0, 0}, {0, 0, 0}, {1024, 1, 1}, {1, 1, 1}};
}

class SimtLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    fake.device.name = "Fake H200";
    fake.device.cc = {9, 0};
    fake.device.shared_per_block_optin = 227 * 1024;
  }
  Module module() { return Module::nvrtc<SIMT_TEST_KERNELS>(kernel_source(), "test_kernels.cuh"); }

  FakeDriver fake;
  detail::ScopedDriverBridge installed{fake};
};

TEST_F(SimtLaunch, NvrtcSourceGetsTheDeviceApiAndTheHostsDeclarations) {
  (void)module();
  ASSERT_EQ(fake.sources.size(), 1u);
  const std::string& unit = fake.sources[0];
  EXPECT_NE(unit.find("class DisjointSpan"), std::string::npos);
  EXPECT_NE(unit.find("struct t_add : ::tessera::simt::detail::KernelBase {"), std::string::npos);
  EXPECT_NE(unit.find("static __device__ void body(::tessera::simt::Index1D, "
                      "::tessera::simt::DisjointSpan<float>, ::tessera::simt::Span<const float>, "
                      "::tessera::simt::Span<const float>);"),
            std::string::npos);
  EXPECT_NE(unit.find("static __device__ void body(const ::tessera::simt::TileIndex2D<32, 32, 4, "
                      "4>&, ::tessera::simt::DisjointSpan2D<int>, int);"),
            std::string::npos);
  EXPECT_NE(unit.find("static constexpr int kLaunchBound = 256;"), std::string::npos);
  EXPECT_NE(unit.find("static __device__ void body(float*, const float*, long);"),
            std::string::npos);
  EXPECT_NE(unit.find("#line 1 \"test_kernels.cuh\""), std::string::npos);
  EXPECT_EQ(unit.find("#include <tessera/simt/kernel.hpp>"), std::string::npos);
}

TEST_F(SimtLaunch, LaunchBindsTensorsToSpansAndRunsTheConfiguredShape) {
  std::vector<float> o(1000, 0), x(1000, 1.5f), y(1000, 2);
  auto out = on_gpu(o, {1000});
  auto xs = on_gpu(x, {1000});
  auto ys = on_gpu(y, {1000});
  const auto add = prepare<t_add>(module(), cover(1000, 256));
  auto [out1, x1, y1] = add(std::move(out), xs, ys).sync();
  ASSERT_EQ(fake.launches.size(), 1u);
  const FakeDriver::Launch& l = fake.launches[0];
  EXPECT_EQ(l.kernel, "t_add");
  EXPECT_EQ(l.grid[0], 4u);
  EXPECT_EQ(l.block[0], 256u);
  EXPECT_EQ(l.grid[1] * l.grid[2] * l.block[1] * l.block[2], 1u);

  // The pack's spans are the tensors: run thread 7's body by hand through them.
  const auto pack = pack_of<t_add>(l);
  const auto& sout = detail::PackGet<0>::get(pack);
  const auto& sx = detail::PackGet<1>::get(pack);
  const auto& sy = detail::PackGet<2>::get(pack);
  EXPECT_EQ(sout.size(), 1000);
  EXPECT_EQ(sx.size(), 1000);
  const detail::SimulatedThread simulated(thread(7));
  const Index1D i = detail::SimulatedThread::witness<Index1D>();
  if (auto s = sout.at(i)) *s = sx[i] + sy[i];
  EXPECT_EQ(o[7], 3.5f);
  // The future handed the arguments back: the output is the tensor passed in.
  EXPECT_EQ(out1.handle().address(), reinterpret_cast<uintptr_t>(o.data()));
}

// A SIMT launch runs at once: inside capture() it would run once and never at a replay, so it is
// refused there, before it takes anything (runtime/graph.hpp).
TEST_F(SimtLaunch, ALaunchInsideAGraphCaptureIsRefusedAndItsTwinOutsideRuns) {
  std::vector<float> o(1000, 0), x(1000, 1.5f), y(1000, 2);
  auto out = on_gpu(o, {1000});
  auto xs = on_gpu(x, {1000});
  auto ys = on_gpu(y, {1000});
  const auto add = prepare<t_add>(module(), cover(1000, 256));
  std::string refused;
  const Graph g = capture(
      "step", [&] { refused = error_of<GraphError>([&] { (void)add(std::move(out), xs, ys); }); });
  EXPECT_NE(refused.find("inside the capture of graph 'step' (captured at "), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("a SIMT launch of kernel 't_add' runs at once and cannot be recorded "
                         "into a graph; do it before capture() or after it"),
            std::string::npos)
      << refused;
  EXPECT_EQ(fake.launches.size(), 0u);
  EXPECT_EQ(g.launches(), 0u);
  auto [out1, x1, y1] = add(std::move(out), xs, ys).sync();
  EXPECT_EQ(fake.launches.size(), 1u);
}

TEST_F(SimtLaunch, MatrixSpansCarryRowsColumnsAndThePitchOfAView) {
  std::vector<float> a(6 * 10, 1), o(6 * 8, 0);
  auto as = on_gpu(a, {6, 10}).slice(1, 2, 10);  // 6 x 8 view with a row pitch of 10
  auto out = on_gpu(o, {6, 8});
  (void)prepare<t_scale2d>(module(), LaunchConfig<2>{{{1, 1}}, {{32, 8}}})(std::move(out), as, 2.0f)
      .sync();
  ASSERT_EQ(fake.launches.size(), 1u);
  const auto pack = pack_of<t_scale2d>(fake.launches[0]);
  const auto& sa = detail::PackGet<1>::get(pack);
  EXPECT_EQ(sa.rows(), 6);
  EXPECT_EQ(sa.cols(), 8);
  EXPECT_EQ(sa.pitch(), 10);
  a[10 + 2] = 42;  // element (1, 0) of the view
  EXPECT_EQ(sa(1, 0), 42);
  EXPECT_EQ(detail::PackGet<2>::get(pack), 2.0f);
}

TEST_F(SimtLaunch, PrepareRejectsAConfigThatBreaksTheContract) {
  const std::string e = error_of<LaunchError>([&] {
    (void)prepare<t_scale2d>(module(), LaunchConfig<2>{{{4, 4}}, {{16, 16}}});
  });
  EXPECT_NE(e.find("kernel 't_scale2d': the launch's block shape (16, 16) is not the contract's "
                   "exact block shape (32, 8)"),
            std::string::npos)
      << e;
  EXPECT_TRUE(fake.launches.empty());
}

TEST_F(SimtLaunch, PrepareReadsTheLiveLimitsOfTheDeviceAndTheFunction) {
  fake.function["tessera_simt_t_add"].max_threads_per_block = 256;
  fake.function["tessera_simt_t_add"].registers = 200;
  const std::string e =
      error_of<LaunchError>([&] { (void)prepare<t_add>(module(), cover(4096, 512)); });
  EXPECT_NE(e.find("more than the 256 per block this kernel can run with on device 0 (Fake "
                   "H200) (it uses 200 registers per thread)"),
            std::string::npos)
      << e;

  const std::string cc =
      error_of<LaunchError>([&] { (void)prepare<t_future>(module(), cover(1, 32)); });
  EXPECT_NE(cc.find("needs compute capability 99.0 or newer, but device 0 (Fake H200) is 9.0"),
            std::string::npos)
      << cc;
}

TEST_F(SimtLaunch, LargeDynamicSharedMemoryIsOptedIntoAndPassedToTheLaunch) {
  std::vector<int> o(128, 0);
  auto out = on_gpu(o, {128});
  (void)prepare<t_big_shared>(module(), cover(128, 128))(std::move(out)).sync();
  EXPECT_EQ(fake.shared_allowed["tessera_simt_t_big_shared"], 100 * 1024);
  ASSERT_EQ(fake.launches.size(), 1u);
  EXPECT_EQ(fake.launches[0].dynamic_shared_bytes, 100u * 1024);

  fake.device.shared_per_block_optin = 64 * 1024;
  const std::string e =
      error_of<LaunchError>([&] { (void)prepare<t_big_shared>(module(), cover(128, 128)); });
  EXPECT_NE(e.find("102400 bytes of dynamic shared memory"), std::string::npos) << e;
}

TEST_F(SimtLaunch, SizeRelationsAreCheckedAtEveryLaunchWithBothValues) {
  std::vector<float> o(1000), x(999), y(1000);
  auto out = on_gpu(o, {1000});
  auto xs = on_gpu(x, {999});
  auto ys = on_gpu(y, {1000});
  const auto add = prepare<t_add>(module(), cover(1000, 256));
  const std::string e = error_of<LaunchError>([&] { (void)add(std::move(out), xs, ys); });
  EXPECT_NE(e.find("kernel 't_add': the arguments break the size relation `x.size() == "
                   "out.size()` of its contract: x.size() is 999 and out.size() is 1000"),
            std::string::npos)
      << e;
  EXPECT_TRUE(fake.launches.empty());
  // Refused before anything was taken: the output is still the caller's.
  EXPECT_FALSE(out.empty());  // NOLINT(bugprone-use-after-move)
}

TEST_F(SimtLaunch, RelationsOverScalarsAndTheGridUseCheckedArithmetic) {
  std::vector<int64_t> o(12);
  auto out = on_gpu(o, {12});
  const auto iota = prepare<t_iota>(module(), cover(12, 64));
  EXPECT_NO_THROW(out = std::get<0>(iota(std::move(out), 3, 4).sync()));
  const std::string e = error_of<LaunchError>(
      [&] { (void)iota(std::move(out), int64_t{1} << 32, int64_t{1} << 32); });
  EXPECT_NE(e.find("the size relation `out.size() == rows * cols` of its contract cannot be "
                   "checked: rows * cols overflows 64 bits (4294967296 * 4294967296)"),
            std::string::npos)
      << e;

  std::vector<int> r(512), xr(512);
  auto rout = on_gpu(r, {512});
  auto rx = on_gpu(xr, {512});
  const std::string threads = error_of<LaunchError>(
      [&] { (void)prepare<t_reverse_blocks>(module(), cover(1024, 256))(std::move(rout), rx); });
  EXPECT_NE(threads.find("`threads<0> == out.size()` of its contract: threads<0> is 1024 and "
                         "out.size() is 512"),
            std::string::npos)
      << threads;
}

// Class 4 of issue 10 on the SIMT path: a relation computes in index_t, so an unsigned scalar past
// it (which would wrap to a negative size there) is refused, not compared; its twin launches.
TEST_F(SimtLaunch, AnUnsignedScalarPastTheIndexRangeIsRefusedByARelationThatReadsIt) {
  std::vector<int64_t> o(8);
  auto out = on_gpu(o, {8});
  const auto first = prepare<t_first_n>(module(), cover(8, 64));
  const std::string e = error_of<LaunchError>(
      [&] { (void)first(std::move(out), std::numeric_limits<unsigned long>::max()); });
  EXPECT_EQ(e,
            "kernel 't_first_n': the size relation `out.size() >= n` of its contract cannot be "
            "checked: n is 18446744073709551615, past the 64-bit signed range that size "
            "relations compute in; pass a value below 2^63.");
  EXPECT_TRUE(fake.launches.empty());
  EXPECT_FALSE(out.empty());  // NOLINT(bugprone-use-after-move): refused before it was taken
  // NOLINTNEXTLINE(bugprone-use-after-move)
  EXPECT_NO_THROW(out = std::get<0>(first(std::move(out), 8ul).sync()));
  EXPECT_EQ(fake.launches.size(), 1u);
  const std::string small = error_of<LaunchError>([&] { (void)first(std::move(out), 9ul); });
  EXPECT_NE(small.find("`out.size() >= n` of its contract: out.size() is 8 and n is 9"),
            std::string::npos)
      << small;
}

TEST_F(SimtLaunch, AnOutputMayNotOverlapAnyOtherArgument) {
  // Two wraps of one buffer are two storages: the address ranges are what is compared.
  std::vector<float> buf(300, 0), y(100, 0);
  auto ys = on_gpu(y, {100});
  auto wrap = [&](size_t at) {
    return wrap_unowned_unchecked(buf.data() + at, {100}, Device::cuda(0));
  };
  const auto add = prepare<t_add>(module(), cover(100, 128));

  auto out = wrap(0);
  auto same = wrap(0);
  const std::string e = error_of<OwnershipError>([&] { (void)add(std::move(out), same, ys); });
  EXPECT_NE(e.find("kernel 't_add': output 'out' overlaps input 'x'"), std::string::npos) << e;

  auto shifted = wrap(50);  // overlaps out by 50 elements
  EXPECT_NE(error_of<OwnershipError>([&] {
              (void)add(std::move(out), shifted, ys);
            }).find("overlaps input 'x'"),
            std::string::npos);

  auto separate = wrap(100);  // disjoint bytes
  EXPECT_NO_THROW((void)add(std::move(out), separate, ys).sync());
  EXPECT_EQ(fake.launches.size(), 1u);
}

TEST_F(SimtLaunch, TensorsMustBeLiveContiguousAndOnTheKernelsDevice) {
  std::vector<float> o(64), x(64), y(64);
  auto out = on_gpu(o, {64});
  auto ys = on_gpu(y, {64});
  const auto add = prepare<t_add>(module(), cover(64, 64));

  auto host_x = wrap_unowned_unchecked(x.data(), {64}, Device::cpu());
  EXPECT_NE(error_of<UsageError>([&] { (void)add(std::move(out), host_x, ys); })
                .find("the tensor passed for parameter 'x' is on cpu, but the kernel runs on "
                      "cuda:0"),
            std::string::npos);

  auto xs = on_gpu(x, {64});
  auto moved = std::move(xs);
  (void)moved;
  EXPECT_NE(error_of<OwnershipError>(
                [&] { (void)add(std::move(out), xs, ys); })  // NOLINT(bugprone-use-after-move)
                .find("parameter 'x' was moved from"),
            std::string::npos);

  std::vector<float> m(8 * 16);
  auto column_slice = on_gpu(m, {8, 16}).slice(1, 0, 8);  // rows of 8 with a pitch of 16
  Tensor<float> strided = column_slice;
  EXPECT_NE(error_of<UsageError>([&] {
              (void)add(std::move(out), strided, ys);
            }).find("is a strided view"),
            std::string::npos);
}

TEST_F(SimtLaunch, AMatrixSpanNeedsARankTwoTensor) {
  std::vector<float> o(64), a(64);
  auto out = on_gpu(o, {8, 8});
  Tensor<float> flat = on_gpu(a, {64});
  const auto scale = prepare<t_scale2d>(module(), LaunchConfig<2>{{{1, 1}}, {{32, 8}}});
  EXPECT_NE(error_of<UsageError>([&] {
              (void)scale(std::move(out), flat, 1.0f);
            }).find("parameter 'a' is a 2-D span, but the tensor passed for it has rank 1"),
            std::string::npos);
}

TEST_F(SimtLaunch, AnEmptyGridChecksTheArgumentsAndLaunchesNothing) {
  std::vector<float> o(1), x(1), y(1);
  auto out = on_gpu(o, {0});
  auto xs = on_gpu(x, {0});
  auto ys = on_gpu(y, {1});
  const auto add = prepare<t_add>(module(), cover(0, 256));
  EXPECT_THROW((void)add(std::move(out), xs, ys), LaunchError);  // y.size() != out.size()
  auto ys0 = on_gpu(y, {0});
  // (The refused launch left `out` with the caller.)
  EXPECT_NO_THROW((void)add(std::move(out), xs, ys0).sync());  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(fake.launches.empty());
}

TEST_F(SimtLaunch, UncheckedLaunchPassesRawPointersAndAnyShapeTheDeviceTakes) {
  std::vector<float> d(10), s(10, 4);
  RawLaunchConfig raw;
  raw.grid[0] = 3;
  raw.block[0] = 7;
  raw.block[1] = 2;  // nothing in t_raw_copy cares, and nothing checks it
  raw.dynamic_shared_bytes = 512;
  (void)launch_unchecked<t_raw_copy>(module(), raw, d.data(), s.data(), int64_t{10}).sync();
  ASSERT_EQ(fake.launches.size(), 1u);
  const FakeDriver::Launch& l = fake.launches[0];
  EXPECT_EQ(l.grid[0], 3u);
  EXPECT_EQ(l.block[0], 7u);
  EXPECT_EQ(l.block[1], 2u);
  EXPECT_EQ(l.dynamic_shared_bytes, 512u);
  const auto pack = pack_of<t_raw_copy>(l);
  EXPECT_EQ(detail::PackGet<0>::get(pack), d.data());
  EXPECT_EQ(detail::PackGet<1>::get(pack), s.data());
  EXPECT_EQ(detail::PackGet<2>::get(pack), 10);
}

TEST_F(SimtLaunch, ALaunchsFutureIsPendingUntilTheGpuIsDoneAndReportsItsOwnError) {
  std::vector<float> d(4), s(4);
  RawLaunchConfig raw;
  raw.block[0] = 4;
  fake.asynchronous = true;
  auto first = launch_unchecked<t_raw_copy>(module(), raw, d.data(), s.data(), int64_t{4}).async();
  fake.fail_next = "the fake kernel trapped";
  auto second = launch_unchecked<t_raw_copy>(module(), raw, d.data(), s.data(), int64_t{4});
  ASSERT_EQ(fake.launches.size(), 2u);
  EXPECT_FALSE(first.ready());
  *fake.pending[0] = true;  // the GPU finished the first launch
  EXPECT_TRUE(first.ready());
  EXPECT_NO_THROW((void)std::move(first).sync());
  EXPECT_NE(error_of<BackendError>([&] {
              (void)std::move(second).sync();
            }).find("the fake kernel trapped"),
            std::string::npos);
}

// Class 8 of issue 10: one rule for both paths (runtime/future.hpp). A failed launch whose Future
// is dropped unsynced keeps its error, and the thread's next launch, SIMT or tile, is refused
// with it before it takes anything; the launch after that runs.
TEST_F(SimtLaunch, AFailedLaunchsDroppedFutureRefusesTheThreadsNextLaunchOnce) {
  std::vector<float> d(4), s(4);
  RawLaunchConfig raw;
  raw.block[0] = 4;
  fake.fail_next = "the fake kernel trapped";
  { auto dropped = launch_unchecked<t_raw_copy>(module(), raw, d.data(), s.data(), int64_t{4}); }
  const std::string e = error_of<LostLaunchError>(
      [&] { (void)launch_unchecked<t_raw_copy>(module(), raw, d.data(), s.data(), int64_t{4}); });
  EXPECT_EQ(e.rfind("a launch of SIMT kernel 't_raw_copy' failed, and its Future was destroyed "
                    "without sync() or wait(), so nobody saw its error: \"",
                    0),
            0u)
      << e;
  EXPECT_NE(e.find("the fake kernel trapped"), std::string::npos) << e;
  EXPECT_NE(e.find("This launch was refused before it took its arguments"), std::string::npos);
  EXPECT_EQ(fake.launches.size(), 1u);  // the refused launch queued nothing
  EXPECT_NO_THROW(
      (void)launch_unchecked<t_raw_copy>(module(), raw, d.data(), s.data(), int64_t{4}).sync());
  EXPECT_EQ(fake.launches.size(), 2u);
}

TEST_F(SimtLaunch, UncheckedLaunchOfAContractedKernelSkipsTheContractButNotTheDevice) {
  std::vector<float> o(64), a(64);
  auto out = on_gpu(o, {8, 8});
  auto as = on_gpu(a, {8, 8});
  RawLaunchConfig raw;
  raw.block[0] = 16;  // the contract says exactly (32, 8)
  raw.block[1] = 16;
  out = std::get<0>(launch_unchecked<t_scale2d>(module(), raw, std::move(out), as, 1.0f).sync());
  EXPECT_EQ(fake.launches.size(), 1u);

  raw.block[0] = 2048;
  raw.block[1] = 1;
  EXPECT_NE(error_of<LaunchError>([&] {
              (void)launch_unchecked<t_scale2d>(module(), raw, std::move(out), as, 1.0f);
            }).find("block extent along x is 2048, more than the 1024"),
            std::string::npos);
  // The arguments are still checked: an output overlapping an input is refused.
  raw.block[0] = 32;
  EXPECT_THROW((void)launch_unchecked<t_scale2d>(module(), raw, std::move(out),  // NOLINT
                                                 out, 1.0f),
               OwnershipError);
}

TEST_F(SimtLaunch, AKernelTheModuleDoesNotDefineIsNamed) {
  const Module m = Module::nvrtc<t_add>("// nothing defined here\n", "empty.cu");
  const std::string e = error_of<UsageError>([&] { (void)prepare<t_add>(m, cover(1, 32)); });
  EXPECT_NE(e.find("kernel 't_add' (entry tessera_simt_t_add) is not in the NVRTC source "
                   "'empty.cu'"),
            std::string::npos)
      << e;
}

TEST_F(SimtLaunch, ModulesNeedAGpu) {
  fake.gpu = false;
  EXPECT_NE(error_of<UsageError>([&] { (void)module(); })
                .find("SIMT kernels need a CUDA GPU, and cuda:0 cannot be used: the fake driver "
                      "has no GPU"),
            std::string::npos);
  EXPECT_NE(error_of<UsageError>([&] {
              (void)Module::embedded(Device::cpu());
            }).find("SIMT kernels run on CUDA devices, and cpu is not one"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::simt

// SIMT kernels on the GPU, compiled both ways: ahead of time by nvcc (test_kernels.cu, embedded by
// tessera_add_simt_kernels) and at run time by NVRTC (test_kernels.cuh). Every kernel's result is
// checked against the host's, with ragged edges; contract checks run against the live limits.
#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/runtime/gpu.hpp"
#include "tessera/simt/simt.hpp"
#include "test_kernels.hpp"

namespace tessera::simt {
namespace {

const Device kGpu = Device::cuda(0);

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

enum class Compiler { Nvcc, Nvrtc };

class SimtGpu : public ::testing::TestWithParam<Compiler> {
 protected:
  void SetUp() override {
    std::string why;
    if (!runtime::gpu_usable(&why)) GTEST_SKIP() << "needs a GPU: " << why;
  }
  static const Module& module() {
    if (GetParam() == Compiler::Nvcc) {
      static const Module aot = Module::embedded(kGpu);
      return aot;
    }
    static const Module jit =
        Module::nvrtc<SIMT_TEST_KERNELS>(kernel_source(), "test_kernels.cuh", kGpu);
    return jit;
  }
};

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 97) - 3.0f;
  return v;
}

TEST_P(SimtGpu, VectorAddMatchesTheHost) {
  const int64_t n = 100003;  // not a multiple of the block
  const auto xs = ramp(n, 0.5f), ys = ramp(n, -1.25f);
  auto x = from_host<float, 1>(xs, {n}, kGpu);
  auto y = from_host<float, 1>(ys, {n}, kGpu);
  auto out = zeros<float>({n}, kGpu);
  auto [sum, x1, y1] = prepare<t_add>(module(), cover(n, 256))(std::move(out), x, y).sync();
  const std::vector<float> got = sum.to_vector();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], xs[i] + ys[i]) << "element " << i;
}

TEST_P(SimtGpu, APendingLaunchOwnsItsArgumentsUntilTheGpuIsDone) {
  const int64_t n = 4096;
  const auto xs = ramp(n, 2.0f);
  auto x = from_host<float, 1>(xs, {n}, kGpu);
  auto pending = prepare<t_add>(module(), cover(n, 128))(zeros<float>({n}, kGpu), x, x).async();
  // The future holds x: it cannot become the output of another launch meanwhile.
  EXPECT_THROW((void)prepare<t_add>(module(), cover(n, 128))(std::move(x), x, x),  // NOLINT
               OwnershipError);
  auto [out, x1, x2] = std::move(pending).sync();
  const std::vector<float> got = out.to_vector();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2 * xs[i]) << "element " << i;
}

TEST_P(SimtGpu, MatrixKernelReadsAPitchedView) {
  const int64_t rows = 70, cols = 45, pitch = 64;
  const auto as = ramp(rows * pitch, 1.0f);
  auto a = from_host<float, 2>(as, {rows, pitch}, kGpu).slice(1, 3, 3 + cols);
  auto out = zeros<float>({rows, cols}, kGpu);
  const LaunchConfig<2> config{{{(cols + 31) / 32, (rows + 7) / 8}}, {{32, 8}}};
  out = std::get<0>(prepare<t_scale2d>(module(), config)(std::move(out), a, 3.0f).sync());
  const std::vector<float> got = out.to_vector();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(got[r * cols + c], 3.0f * as[r * pitch + 3 + c]) << r << ", " << c;
}

TEST_P(SimtGpu, TileWitnessCoversARaggedMatrixOnce) {
  const int64_t rows = 70, cols = 45;
  auto out = full<int>({rows, cols}, -1, kGpu);
  const LaunchConfig<2> config{{{(cols + 31) / 32, (rows + 31) / 32}}, {{8, 8}}};
  out = std::get<0>(prepare<t_tile>(module(), config)(std::move(out), 1000).sync());
  const std::vector<int> got = out.to_vector();
  for (int64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(got[i], 1000 + i) << "element " << i;
}

TEST_P(SimtGpu, WarpRowSumsMatchTheHost) {
  const int64_t rows = 100, cols = 1000;
  const auto ms = ramp(rows * cols, 0.25f);
  auto m = from_host<float, 2>(ms, {rows, cols}, kGpu);
  auto out = zeros<float>({rows}, kGpu);
  out = std::get<0>(prepare<t_rowsum>(module(), cover(rows * 32, 128))(std::move(out), m).sync());
  const std::vector<float> got = out.to_vector();
  for (int64_t r = 0; r < rows; ++r) {
    double want = 0;
    for (int64_t c = 0; c < cols; ++c) want += ms[r * cols + c];
    ASSERT_NEAR(got[r], want, 1e-3 * std::abs(want) + 1e-3) << "row " << r;
  }
}

TEST_P(SimtGpu, DynamicSharedMemoryComesFromTheContract) {
  const int64_t n = 1024;
  std::vector<int> xs(n);
  std::iota(xs.begin(), xs.end(), 0);
  auto x = from_host<int, 1>(xs, {n}, kGpu);
  auto out = zeros<int>({n}, kGpu);
  out = std::get<0>(prepare<t_reverse_blocks>(module(), cover(n, 256))(std::move(out), x).sync());
  const std::vector<int> got = out.to_vector();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], (i / 256) * 256 + 255 - i % 256) << i;

  // 100 KiB: more than a block gets without opting in; prepare opts in.
  auto big = zeros<int>({256}, kGpu);
  big = std::get<0>(prepare<t_big_shared>(module(), cover(256, 128))(std::move(big)).sync());
  for (int v : big.to_vector()) ASSERT_EQ(v, 100 * 1024 / 4);
}

TEST_P(SimtGpu, PrepareChecksTheLiveDeviceLimits) {
  const DeviceLimits& d = module().device_limits();
  EXPECT_FALSE(d.name.empty());
  EXPECT_GE(d.cc.major, 8);
  EXPECT_EQ(d.max_block[2], 64);
  EXPECT_GT(d.shared_per_block_optin, 48 * 1024);

  const std::string cc =
      error_of<LaunchError>([&] { (void)prepare<t_future>(module(), cover(1, 32)); });
  EXPECT_NE(cc.find("needs compute capability 99.0 or newer, but device 0 (" + d.name + ")"),
            std::string::npos)
      << cc;
  const std::string shared =
      error_of<LaunchError>([&] { (void)prepare<t_huge_shared>(module(), cover(128, 128)); });
  EXPECT_NE(shared.find("307200 bytes of dynamic shared memory"), std::string::npos) << shared;
  // A grid within the contract but past the device's limit along y (65535 on every sm_80+ GPU).
  const std::string grid = error_of<LaunchError>([&] {
    (void)prepare<t_scale2d>(module(), LaunchConfig<2>{{{1, 70000}}, {{32, 8}}});
  });
  EXPECT_NE(grid.find("grid extent along y is 70000, more than the " +
                      std::to_string(d.max_grid[1]) + " that device 0 (" + d.name + ") allows"),
            std::string::npos)
      << grid;
  // Unchecked launches skip the contract, not the device.
  auto out = zeros<float>({4096}, kGpu);
  auto x = zeros<float>({4096}, kGpu);
  RawLaunchConfig raw;
  raw.block[0] = 2048;
  const std::string threads = error_of<LaunchError>(
      [&] { (void)launch_unchecked<t_add>(module(), raw, std::move(out), x, x); });
  EXPECT_NE(threads.find("block extent along x is 2048, more than the 1024"), std::string::npos)
      << threads;
}

TEST_P(SimtGpu, FunctionLimitsFollowTheContractsLaunchBound) {
  // t_rowsum's contract allows at most 256 threads, so its entry is __launch_bounds__(256).
  const FunctionLimits f = module().function("t_rowsum").limits;
  EXPECT_GT(f.max_threads_per_block, 0);
  EXPECT_LE(f.max_threads_per_block, 256);
}

TEST_P(SimtGpu, SizeRelationsStopALaunchBeforeItRuns) {
  auto x = zeros<float>({999}, kGpu);
  auto y = zeros<float>({1000}, kGpu);
  auto out = full<float>({1000}, 5.0f, kGpu);
  EXPECT_THROW((void)prepare<t_add>(module(), cover(1000, 256))(std::move(out), x, y), LaunchError);
  // Untouched, and still the caller's: the launch was refused before it took anything.
  for (float v : out.to_vector()) ASSERT_EQ(v, 5.0f);  // NOLINT(bugprone-use-after-move)
}

TEST_P(SimtGpu, UncheckedKernelCopiesThroughRawPointers) {
  const int64_t n = 777;
  const auto ss = ramp(n, 1.5f);
  auto src = from_host<float, 1>(ss, {n}, kGpu);
  auto dst = zeros<float>({n}, kGpu);
  RawLaunchConfig raw;
  raw.grid[0] = (n + 127) / 128;
  raw.block[0] = 128;
  dst = std::get<0>(launch_unchecked<t_raw_copy>(module(), raw, std::move(dst), src, n).sync());
  EXPECT_EQ(dst.to_vector(), ss);
}

INSTANTIATE_TEST_SUITE_P(BothCompilers, SimtGpu, ::testing::Values(Compiler::Nvcc, Compiler::Nvrtc),
                         [](const ::testing::TestParamInfo<Compiler>& i) {
                           return i.param == Compiler::Nvcc ? "Nvcc" : "Nvrtc";
                         });

}  // namespace
}  // namespace tessera::simt

// Launching hand-written NVRTC kernels through the runtime's GPU launch path (gpu_prepare,
// gpu_launch) with abi.hpp's argument layout: results, argument passing, asynchrony, and launches
// checked against the device's limits.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "../runtime/scoped_env.hpp"
#include "gpu_test_util.hpp"
#include "tessera/core/half.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

using GpuLaunch = GpuTest;

backend::ArgValue scalar(double v) {
  backend::ArgValue a;
  a.scalar = v;
  return a;
}
backend::ArgValue iscalar(int64_t v) {
  backend::ArgValue a;
  a.iscalar = v;
  return a;
}

TEST_F(GpuLaunch, AxpyRunsOverARaggedGrid) {
  const int64_t n = 1000;  // 4 blocks of 256, the last one partly outside
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 0.5f * static_cast<float>(i);
  DeviceBuffer dx(gpu(), x), dy(gpu(), y);
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params()));
  backend::LaunchArgs args;
  args.grid = {ceil_div(n, 256)};
  args.args = {tensor_arg(dy, DType::F32, {n}), tensor_arg(dx, DType::F32, {n}), scalar(3.0)};
  runtime::gpu_launch(*k, args)->wait();
  const auto out = dy.download<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 0.5f * i + 3.0f * i) << "at " << i;
}

TEST_F(GpuLaunch, StridedTensorsAreAddressedThroughTheirStrides) {
  const int64_t n = 300;
  std::vector<float> x(3 * n), y(n, 1.0f);
  for (int64_t i = 0; i < 3 * n; ++i) x[i] = static_cast<float>(i);
  DeviceBuffer dx(gpu(), x), dy(gpu(), y);
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params()));
  backend::LaunchArgs args;
  args.grid = {ceil_div(n, 256)};
  // x viewed with stride 3: elements 0, 3, 6, ...
  args.args = {tensor_arg(dy, DType::F32, {n}), tensor_arg(dx, DType::F32, {n}, {3}), scalar(1.0)};
  runtime::gpu_launch(*k, args)->wait();
  const auto out = dy.download<float>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 1.0f + 3.0f * i) << "at " << i;
}

TEST_F(GpuLaunch, ScalarsArePassedAsTheirOwnCTypes) {
  const char* body = R"(
extern "C" __global__ void scalars(TesseraGrid grid, TesseraTensorRef out, bool b, signed char i8,
                                   short i16, int i32, long long i64, unsigned char u8,
                                   unsigned short f16, unsigned short bf16, float f32, double f64) {
  double* o = (double*)out.data;
  o[0] = b; o[1] = i8; o[2] = i16; o[3] = i32; o[4] = (double)i64; o[5] = u8;
  o[6] = f16; o[7] = bf16; o[8] = f32; o[9] = f64;
}
)";
  using P = runtime::GpuParam;
  const std::vector<P> params{
      {ir::ParamKind::Out, DType::F64},     {ir::ParamKind::Scalar, DType::Bool},
      {ir::ParamKind::Scalar, DType::I8},   {ir::ParamKind::Scalar, DType::I16},
      {ir::ParamKind::Scalar, DType::I32},  {ir::ParamKind::Scalar, DType::I64},
      {ir::ParamKind::Scalar, DType::U8},   {ir::ParamKind::Scalar, DType::F16},
      {ir::ParamKind::Scalar, DType::BF16}, {ir::ParamKind::Scalar, DType::F32},
      {ir::ParamKind::Scalar, DType::F64}};
  DeviceBuffer out(gpu(), std::vector<double>(10, -1.0));
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("scalars", body, params, 1));
  backend::LaunchArgs args;
  args.grid = {1};
  args.args = {tensor_arg(out, DType::F64, {10}),
               iscalar(1),
               iscalar(-5),
               iscalar(-300),
               iscalar(-70000),
               iscalar(-5000000000000),
               iscalar(200),
               scalar(1.5),
               scalar(-2.5),
               scalar(2.25),
               scalar(3.125)};
  runtime::gpu_launch(*k, args)->wait();
  const auto o = out.download<double>();
  EXPECT_EQ(o[0], 1);
  EXPECT_EQ(o[1], -5);
  EXPECT_EQ(o[2], -300);
  EXPECT_EQ(o[3], -70000);
  EXPECT_EQ(o[4], -5000000000000.0);
  EXPECT_EQ(o[5], 200);
  EXPECT_EQ(o[6], half(1.5f).bits);  // f16 and bf16 travel as their bit patterns
  EXPECT_EQ(o[7], bfloat16(-2.5f).bits);
  EXPECT_EQ(o[8], 2.25);
  EXPECT_EQ(o[9], 3.125);
}

TEST_F(GpuLaunch, GridAndTensorRefsCarryShapesStridesAndPaddingOfUnusedAxes) {
  const char* body = R"(
extern "C" __global__ void layout(TesseraGrid grid, TesseraTensorRef out, TesseraTensorRef x) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  tessera_i64* o = (tessera_i64*)out.data;
  for (int d = 0; d < TESSERA_MAX_RANK; ++d) {
    o[d] = grid.tiles[d];
    o[4 + d] = x.shape[d];
    o[8 + d] = x.strides[d];
  }
  o[12] = grid.total;
  o[13] = gridDim.x;
  o[14] = (tessera_i64)(unsigned long long)x.data;
}
)";
  DeviceBuffer out(gpu(), std::vector<int64_t>(15, -1));
  DeviceBuffer x(gpu(), 6 * 10 * sizeof(float));
  auto k = runtime::gpu_prepare(
      gpu(), abi_kernel("layout", body,
                        {{ir::ParamKind::Out, DType::I64}, {ir::ParamKind::In, DType::F32}}, 32));
  backend::LaunchArgs args;
  args.grid = {3, 5};
  args.args = {tensor_arg(out, DType::I64, {15}), tensor_arg(x, DType::F32, {6, 10}, {10, 1})};
  runtime::gpu_launch(*k, args)->wait();
  const auto o = out.download<int64_t>();
  const std::vector<int64_t> expected{
      3,  5, 1,  1,  6,
      10, 1, 1,  10, 1,
      0,  0, 15, 15, static_cast<int64_t>(reinterpret_cast<uintptr_t>(x.data()))};
  EXPECT_EQ(o, expected);
}

TEST_F(GpuLaunch, LaunchReturnsBeforeTheKernelFinishes) {
  // Spins for 300 ms of GPU time (the global timer counts nanoseconds).
  const char* body = R"(
extern "C" __global__ void spin(TesseraGrid grid, TesseraTensorRef out) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < 300000000ull);
  if (threadIdx.x == 0) *(int*)out.data = 1;
}
)";
  DeviceBuffer out(gpu(), std::vector<int>{0});
  auto k =
      runtime::gpu_prepare(gpu(), abi_kernel("spin", body, {{ir::ParamKind::Out, DType::I32}}, 32));
  backend::LaunchArgs args;
  args.grid = {1};
  args.args = {tensor_arg(out, DType::I32, {1})};
  auto done = runtime::gpu_launch(*k, args);
  EXPECT_FALSE(done->ready());
  done->wait();
  EXPECT_TRUE(done->ready());
  EXPECT_EQ(out.download<int>()[0], 1);
}

TEST_F(GpuLaunch, LaunchesRunInTheOrderTheyWereMade) {
  const char* body = R"(
extern "C" __global__ void inc(TesseraGrid grid, TesseraTensorRef y) {
  tessera_i64 i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < y.shape[0]) ((int*)y.data)[i] = ((int*)y.data)[i] * 2 + 1;
}
)";
  const int64_t n = 4096;
  DeviceBuffer y(gpu(), std::vector<int>(n, 0));
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("inc", body, {{ir::ParamKind::Out, DType::I32}}));
  backend::LaunchArgs args;
  args.grid = {n / 256};
  args.args = {tensor_arg(y, DType::I32, {n})};
  std::vector<std::shared_ptr<runtime::Completion>> launches;
  for (int i = 0; i < 20; ++i) launches.push_back(runtime::gpu_launch(*k, args));
  launches.back()->wait();
  // x -> 2x + 1, twenty times from 0: 2^20 - 1 (any reordering would give another number).
  EXPECT_EQ(y.download<int>(), std::vector<int>(n, (1 << 20) - 1));
  for (auto& l : launches) EXPECT_TRUE(l->ready());
}

TEST_F(GpuLaunch, EmptyGridLaunchesNothingAndCompletes) {
  DeviceBuffer dy(gpu(), 16), dx(gpu(), 16);
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params()));
  backend::LaunchArgs args;
  args.grid = {0};
  args.args = {tensor_arg(dy, DType::F32, {0}), tensor_arg(dx, DType::F32, {0}), scalar(1.0)};
  EXPECT_NO_THROW(runtime::gpu_launch(*k, args)->wait());
}

TEST_F(GpuLaunch, TooManyThreadsPerBlockIsALaunchErrorNamingBothValues) {
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params(), 2048));
  DeviceBuffer dy(gpu(), 16), dx(gpu(), 16);
  backend::LaunchArgs args;
  args.grid = {1};
  args.args = {tensor_arg(dy, DType::F32, {4}), tensor_arg(dx, DType::F32, {4}), scalar(1.0)};
  try {
    runtime::gpu_launch(*k, args);
    FAIL() << "expected a LaunchError";
  } catch (const LaunchError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel 'axpy' is launched with 2048 threads per block"), std::string::npos)
        << m;
    EXPECT_NE(m.find("it can run with 1 to 1024"), std::string::npos) << m;
  }
}

TEST_F(GpuLaunch, TensorOfRankFiveIsALaunchError) {
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params()));
  DeviceBuffer dy(gpu(), 64), dx(gpu(), 64);
  backend::LaunchArgs args;
  args.grid = {1};
  args.args = {tensor_arg(dy, DType::F32, {2, 2, 2, 1, 1}), tensor_arg(dx, DType::F32, {4}),
               scalar(1.0)};
  try {
    runtime::gpu_launch(*k, args);
    FAIL() << "expected a LaunchError";
  } catch (const LaunchError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 1 has rank 5"), std::string::npos) << e.what();
  }
}

const char* kSharedSum = R"(
extern "C" __global__ void shared_sum(TesseraGrid grid, TesseraTensorRef out) {
  extern __shared__ int buffer[];
  const int n = (int)out.shape[0];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buffer[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) {
    long long sum = 0;
    for (int i = 0; i < n; ++i) sum += buffer[n - 1 - i];
    *(long long*)out.data = sum;
  }
}
)";

TEST_F(GpuLaunch, DynamicSharedMemoryBeyondTheDefaultLimitIsOptedInto) {
  const size_t bytes = 100 * 1024;  // more than the 48 KiB a kernel gets without asking
  const int64_t n = static_cast<int64_t>(bytes / sizeof(int));
  auto k = runtime::gpu_prepare(
      gpu(), abi_kernel("shared_sum", kSharedSum, {{ir::ParamKind::Out, DType::I64}}, 256, bytes));
  DeviceBuffer out(gpu(), std::vector<int64_t>{-1});
  backend::LaunchArgs args;
  args.grid = {1};
  args.args = {tensor_arg(out, DType::I64, {n})};
  runtime::gpu_launch(*k, args)->wait();
  EXPECT_EQ(out.download<int64_t>()[0], n * (n - 1) / 2);
}

TEST_F(GpuLaunch, SharedMemoryBeyondTheDeviceIsALaunchErrorNamingBothValues) {
  try {
    runtime::gpu_prepare(gpu(), abi_kernel("shared_sum", kSharedSum,
                                           {{ir::ParamKind::Out, DType::I64}}, 256, 1 << 20));
    FAIL() << "expected a LaunchError";
  } catch (const LaunchError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("kernel 'shared_sum' needs 1048576 bytes of shared memory per block"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("allows at most"), std::string::npos) << m;
  }
}

TEST_F(GpuLaunch, SameSourceOnTheSameDeviceIsPreparedOnce) {
  auto a = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params()));
  auto b = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params()));
  EXPECT_EQ(a.get(), b.get());
  // Another launch configuration of the same source is another prepared kernel.
  auto c = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params(), 128));
  EXPECT_NE(a.get(), c.get());
}

TEST_F(GpuLaunch, DumpWritesTheCudaSourceAndThePtxToFiles) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tessera-dump-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    const ScopedEnv dump("TESSERA_DUMP", "cuda,ptx");
    const ScopedEnv dump_dir("TESSERA_DUMP_DIR", dir.string());
    // A source of its own, so that no earlier test has prepared it.
    const std::string source = std::string(kAxpy) + "// dump test " + std::to_string(::getpid());
    runtime::gpu_prepare(gpu(), abi_kernel("axpy", source, axpy_params()));
  }
  std::string cu, ptx;
  for (const auto& f : fs::directory_iterator(dir)) {
    std::stringstream text;
    text << std::ifstream(f.path()).rdbuf();
    if (f.path().extension() == ".cu") cu = text.str();
    if (f.path().extension() == ".ptx") ptx = text.str();
    EXPECT_EQ(f.path().filename().string().rfind("axpy.", 0), 0u) << f.path();
  }
  fs::remove_all(dir);
  EXPECT_NE(cu.find("// dump test"), std::string::npos) << cu;
  EXPECT_NE(ptx.find(".target sm_"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".entry axpy("), std::string::npos) << ptx;
}

TEST_F(GpuLaunch, SourceThatDoesNotCompileIsABackendErrorWithTheLog) {
  try {
    runtime::gpu_prepare(gpu(),
                         abi_kernel("bad", "extern \"C\" __global__ void bad() { nope; }", {}));
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("identifier \"nope\" is undefined"), std::string::npos)
        << e.what();
  }
}

}  // namespace

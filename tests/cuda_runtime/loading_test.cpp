// Without a driver (CI, laptops), the CUDA backend loads nothing, says what is missing, and the
// runtime runs on the CPU. These tests skip themselves on a machine where a GPU is usable.
#include <gtest/gtest.h>

#include <cstdlib>

#include <tessera/tessera.hpp>

#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/launch.hpp"
#include "tessera/runtime/gpu.hpp"

using namespace tessera;

namespace {

bool driver_present() {
  return backend::cuda::driver_available(nullptr);
}

TEST(LoadingWithoutDriver, DriverIsReportedMissingWithWhatToInstall) {
  std::string why;
  if (backend::cuda::driver_available(&why)) GTEST_SKIP() << "a CUDA driver is installed here";
  EXPECT_NE(why.find("libcuda.so.1"), std::string::npos) << why;
  EXPECT_NE(why.find("install the NVIDIA driver"), std::string::npos) << why;
  try {
    backend::cuda::driver();
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

TEST(LoadingWithoutDriver, GpuIsNotUsableAndTheReasonSaysWhy) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed here";
  std::string why;
  EXPECT_FALSE(runtime::gpu_usable(&why));
  EXPECT_NE(why.find("libcuda.so.1"), std::string::npos) << why;
  // Asked twice, the same answer: loading is attempted once.
  std::string again;
  EXPECT_FALSE(runtime::gpu_usable(&again));
  EXPECT_EQ(why, again);
}

TEST(LoadingWithoutDriver, RequireGpuThrowsUsageErrorNamingTheDeviceAndTheWayOut) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed here";
  try {
    runtime::require_gpu(Device::cuda(1));
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("device cuda:1 was asked for"), std::string::npos) << m;
    EXPECT_NE(m.find("libcuda.so.1"), std::string::npos) << m;
    EXPECT_NE(m.find("TESSERA_DEVICE=cpu"), std::string::npos) << m;
  }
}

TEST(LoadingWithoutDriver, CpuNeedsNoGpu) {
  EXPECT_NO_THROW(runtime::require_gpu(Device::cpu()));
}

TEST(LoadingWithoutDriver, GpuMemoryIsAUsageErrorNotACrash) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed here";
  EXPECT_THROW(runtime::gpu_allocate(Device::cuda(0), 256), UsageError);
  EXPECT_THROW(zeros<float>({16}, Device::cuda(0)), UsageError);
  std::vector<float> host(4);
  EXPECT_THROW(runtime::gpu_copy_to_host(Device::cuda(0), host.data(), nullptr, 16), UsageError);
  EXPECT_NO_THROW(runtime::gpu_free(Device::cuda(0), nullptr));
}

TEST(LoadingWithoutDriver, DefaultDeviceIsTheCpu) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed here";
  const char* env = std::getenv("TESSERA_DEVICE");
  if (env && std::string(env) != "cpu") GTEST_SKIP() << "TESSERA_DEVICE=" << env;
  EXPECT_TRUE(default_device().is_cpu());
}

TEST(LoadingWithoutDriver, PreparingAKernelSaysWhatIsMissing) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed here";
  runtime::GpuKernelSource k;
  k.name = k.entry = "k";
  k.source = "extern \"C\" __global__ void k() {}";
  EXPECT_THROW(runtime::gpu_prepare(Device::cuda(0), k), UsageError);
}

TEST(DriverErrors, DescribeNamesTheResultEvenWithoutADriver) {
  // With a driver: its name and description; without: the number. Never a crash.
  const std::string d = backend::cuda::describe(CUDA_ERROR_OUT_OF_MEMORY);
  if (driver_present())
    EXPECT_NE(d.find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos) << d;
  else
    EXPECT_EQ(d, "CUresult 2");
}

TEST(DriverErrors, CheckPassesSuccessAndThrowsBackendErrorNamingTheCall) {
  EXPECT_NO_THROW(backend::cuda::check(CUDA_SUCCESS, "cuInit"));
  try {
    backend::cuda::check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAllocAsync", "allocating 4 MiB");
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cuMemAllocAsync failed while allocating 4 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("out of memory"), std::string::npos) << m;
  }
}

TEST(DriverVersion, PrintsMajorDotMinor) {
  EXPECT_EQ(backend::cuda::version_string(13000), "13.0");
  EXPECT_EQ(backend::cuda::version_string(12080), "12.8");
}

TEST(LaunchGrid, BlocksAreTheTileCountCappedAtTheDeviceLimit) {
  backend::cuda::DeviceProps p;
  p.max_grid_x = 2147483647;
  EXPECT_EQ(backend::cuda::grid_blocks({8}, p), 8);
  EXPECT_EQ(backend::cuda::grid_blocks({3, 5}, p), 15);
  EXPECT_EQ(backend::cuda::grid_blocks({0}, p), 0);
  EXPECT_EQ(backend::cuda::grid_blocks({3, 5}, p, 4), 60);  // four blocks a tile
  // Beyond the limit the kernel loops over blockIdx.x + k * gridDim.x (abi.hpp).
  EXPECT_EQ(backend::cuda::grid_blocks({65536, 65536}, p), 2147483647);
}

}  // namespace

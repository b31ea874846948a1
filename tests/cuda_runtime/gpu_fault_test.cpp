// Driver errors on purpose: an allocation the GPU cannot hold, an entry point that is not in the
// module, and a kernel that faults (the launch succeeds, since the GPU runs asynchronously, and
// the fault surfaces at wait()). Each is a BackendError naming the driver's error. They live
// apart from cuda_runtime_gpu_tests because compute-sanitizer, which scripts/gpu_check.sh runs
// over that one, reports every failed driver call as an error. The fault leaves the process's GPU
// context unusable, so it is the last test here (and CTest runs each test in its own process).
#include <gtest/gtest.h>

#include <type_traits>

#include "gpu_test_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

using GpuFault = GpuTest;

TEST_F(GpuFault, ImpossibleAllocationIsAnOutOfMemoryErrorNamingSizeAndDevice) {
  // OutOfMemoryError is a BackendError: code that caught the driver's error still catches it.
  try {
    DeviceBuffer huge(gpu(), size_t{1} << 44);  // 16 TiB
    FAIL() << "expected an OutOfMemoryError";
  } catch (const OutOfMemoryError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("out of memory: 17592186044416 bytes could not be allocated on cuda:0"),
              std::string::npos)
        << m;
  }
  static_assert(std::is_base_of_v<BackendError, OutOfMemoryError>);
}

TEST_F(GpuFault, WrongEntryNameIsABackendErrorNamingIt) {
  auto src = abi_kernel("axpy", kAxpy, axpy_params());
  src.entry = "no_such_kernel";
  try {
    runtime::gpu_prepare(gpu(), src);
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cuModuleGetFunction"), std::string::npos) << m;
    EXPECT_NE(m.find("'no_such_kernel'"), std::string::npos) << m;
  }
}

TEST_F(GpuFault, KernelFaultSurfacesAtWaitAsABackendError) {
  const char* body = R"(
extern "C" __global__ void wild_store(TesseraGrid grid, TesseraTensorRef out) {
  // Address 256 (out.shape[1] is 1, which the compiler cannot know): in the unmapped first page.
  *(volatile int*)(256 * out.shape[1]) = 1;
}
)";
  DeviceBuffer out(gpu(), 256);
  auto k = runtime::gpu_prepare(
      gpu(), abi_kernel("wild_store", body, {{ir::ParamKind::Out, DType::I32}}, 32));
  backend::LaunchArgs args;
  args.grid = {1};
  args.args = {tensor_arg(out, DType::I32, {64})};
  std::shared_ptr<runtime::Completion> done;
  ASSERT_NO_THROW(done = runtime::gpu_launch(*k, args));
  try {
    done->wait();
    FAIL() << "expected the fault to surface at wait()";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << m;
    EXPECT_NE(m.find("compute-sanitizer"), std::string::npos) << m;
  }
  // Asked again, the same error: the completion remembers it.
  EXPECT_THROW(done->wait(), BackendError);
}

}  // namespace

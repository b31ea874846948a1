// The GPU runtime used from many host threads at once: each thread's first call makes the
// device's context current, and work from all of them shares the device's stream.
//
// Not in cuda_runtime_gpu_tests: compute-sanitizer's racecheck (CUDA 13.0, on the H200) loses
// track of kernels launched from several host threads at once ("Internal Sanitizer Error:
// Detected a failure to track a kernel launch"), and the sanitizer runs of scripts/gpu_check.sh
// pick the executables named *gpu*. memcheck over this one is worth running by hand.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "gpu_test_util.hpp"

using namespace tessera;
using namespace tessera::test;

namespace {

using GpuThreads = GpuTest;

std::vector<unsigned char> random_bytes(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

backend::ArgValue scalar(double v) {
  backend::ArgValue a;
  a.scalar = v;
  return a;
}

TEST_F(GpuThreads, CopiesFromManyThreadsStayCorrect) {
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (unsigned t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const auto host = random_bytes(4096 + t * 100 + static_cast<unsigned>(i), t * 100 + i);
        DeviceBuffer b(Device::cuda(0), host);
        if (b.download<unsigned char>() == host) ++good;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), 8 * 20);
}

TEST_F(GpuThreads, LaunchesFromManyThreadsEachRunWithTheirOwnArguments) {
  // Threads that never touched the GPU before: each call makes the device's context current.
  auto k = runtime::gpu_prepare(gpu(), abi_kernel("axpy", kAxpy, axpy_params()));
  constexpr int kThreads = 8, kLaunches = 50;
  const int64_t n = 512;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      DeviceBuffer dy(Device::cuda(0), std::vector<float>(n, 0.0f));
      DeviceBuffer dx(Device::cuda(0), std::vector<float>(n, 1.0f));
      backend::LaunchArgs args;
      args.grid = {n / 256};
      args.args = {tensor_arg(dy, DType::F32, {n}), tensor_arg(dx, DType::F32, {n}),
                   scalar(static_cast<double>(t + 1))};
      std::shared_ptr<runtime::Completion> last;
      for (int i = 0; i < kLaunches; ++i) last = runtime::gpu_launch(*k, args);
      last->wait();
      if (dy.download<float>() == std::vector<float>(n, static_cast<float>((t + 1) * kLaunches)))
        ++good;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(good.load(), kThreads);
}

}  // namespace

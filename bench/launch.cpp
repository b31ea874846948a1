// Launch overhead on the GPU: a kernel that adds 1 to 1024 floats, launched and waited for one at
// a time, and launched back to back (a few in flight), through Tessera's safe path and through the
// CUDA driver directly (cuLaunchKernel of the same work compiled by NVRTC, cuStreamSynchronize).
// Prints microseconds per kernel, the median of rounds, and the ratio to the raw launch (target
// in DESIGN.md: the safe sync path at most 1.2x the raw one).
//
//   launch [launches per round=2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <tessera/tessera.hpp>

#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/module.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/launch_profile.hpp"

#include "launch_ring.hpp"

using namespace tessera;
using namespace tessera::tile;
namespace cuda = tessera::backend::cuda;

TESSERA_KERNEL(add_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};

namespace {

constexpr int64_t kN = 1024;
constexpr int kRounds = 7;

using Clock = std::chrono::steady_clock;

// The median over rounds of microseconds per call of `one`, after a warm-up round.
template <class F>
double us_per_call(int calls, F&& one) {
  for (int i = 0; i < calls / 10 + 1; ++i) one();
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) one();
    rounds.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

const char* kRawSource = R"(
extern "C" __global__ void add_one_raw(float* z, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + 1.0f;
})";

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 2000;
  const Device gpu = default_device();
  if (!gpu.is_cuda()) {
    std::printf("# launch: no usable GPU, nothing to time\n");
    return 0;
  }
  std::printf("# launch overhead on %s, %lld floats, median of %d rounds of %d launches\n",
              gpu.str().c_str(), static_cast<long long>(kN), kRounds, calls);

  // Raw: the driver, no checks, no ownership.
  const cuda::DeviceContext& ctx = cuda::device_context(gpu.index());
  const cuda::CompiledCuda compiled =
      cuda::compile_cuda(kRawSource, "add_one_raw", runtime::gpu_arch(gpu));
  const cuda::LoadedKernel raw =
      cuda::load_kernel(ctx, compiled.cubin, "add_one_raw", "add_one_raw", 0);
  void* z_raw = runtime::gpu_allocate(gpu, kN * sizeof(float));
  void* x_raw = runtime::gpu_allocate(gpu, kN * sizeof(float));
  runtime::gpu_synchronize(gpu);
  CUdeviceptr zp = reinterpret_cast<CUdeviceptr>(z_raw), xp = reinterpret_cast<CUdeviceptr>(x_raw);
  int n = static_cast<int>(kN);
  void* params[] = {&zp, &xp, &n};
  auto raw_launch = [&] {
    TESSERA_CU(cuLaunchKernel, raw.function, 1, 1, 1, 1024, 1, 1, 0, ctx.stream(), params, nullptr);
  };
  const double raw_sync = us_per_call(calls, [&] {
    raw_launch();
    TESSERA_CU(cuStreamSynchronize, ctx.stream());
  });
  const double raw_queued = us_per_call(calls, [&] { raw_launch(); });
  TESSERA_CU(cuStreamSynchronize, ctx.stream());

  // Tessera: validation, the specialization cache, ownership, the error report.
  auto x = ones<float>({kN}, gpu);
  auto z = zeros<float>({kN}, gpu).partition({kN});
  const double safe_sync =
      us_per_call(calls, [&] { z = std::get<0>(add_one(std::move(z), x).sync()); });
  // Back to back: a LaunchRing of eight outputs. The host time inside the launch call is timed
  // apart from the rest of each step (the wait for the oldest launch).
  double in_launch = 0, in_step = 0;  // host seconds
  auto timed_launch = [&](Partition<float, 1> out) {
    const auto t0 = Clock::now();
    auto pending = add_one(std::move(out), x);
    in_launch += std::chrono::duration<double>(Clock::now() - t0).count();
    return pending;
  };
  std::vector<Partition<float, 1>> outs;
  outs.push_back(std::move(z));
  for (int i = 1; i < 8; ++i) outs.push_back(zeros<float>({kN}, gpu).partition({kN}));
  LaunchRing ring(timed_launch, std::move(outs));
  in_launch = 0;
  const double safe_queued = us_per_call(calls, [&] {
    const auto t0 = Clock::now();
    ring.relaunch_oldest();
    in_step += std::chrono::duration<double>(Clock::now() - t0).count();
  });
  const double timed_calls = static_cast<double>(kRounds) * calls + calls / 10 + 1;
  const double in_wait = in_step - in_launch;

  // Where the launch call's host time goes: the same back-to-back launches, profiled.
  runtime::profile_launches(true);
  for (int i = 0; i < calls; ++i) ring.relaunch_oldest();
  const runtime::LaunchProfile profile = runtime::take_launch_profile();
  runtime::profile_launches(false);

  // A chain of 8 dependent kernels with no host wait between them (each reads the one before's
  // output; the two buffers swap roles, so each launch also writes what the one before read),
  // then one wait: per kernel. Raw: the same 8 launches on the stream, then one synchronize.
  constexpr int kChain = 8;
  const double raw_chain =
      us_per_call(calls / kChain + 1,
                  [&] {
                    for (int i = 0; i < kChain; ++i) {
                      void* ping[] = {i % 2 ? &xp : &zp, i % 2 ? &zp : &xp, &n};
                      TESSERA_CU(cuLaunchKernel, raw.function, 1, 1, 1, 1024, 1, 1, 0, ctx.stream(),
                                 ping, nullptr);
                    }
                    TESSERA_CU(cuStreamSynchronize, ctx.stream());
                  }) /
      kChain;
  Tensor<float, 1> cur = ones<float>({kN}, gpu);
  Partition<float, 1> spare = zeros<float>({kN}, gpu).partition({kN});
  const double safe_chain =
      us_per_call(calls / kChain + 1,
                  [&] {
                    for (int i = 0; i < kChain; ++i) {
                      auto f = add_one(std::move(spare), cur);
                      cur = Tensor<float, 1>();
                      auto [out, in] = i + 1 < kChain ? std::move(f).chain() : std::move(f).sync();
                      spare =
                          std::move(in).partition({kN});  // written next, after this launch's read
                      cur = std::move(out).unpartition();
                    }
                  }) /
      kChain;

  std::printf("%-40s %10.2f us\n", "raw launch + sync", raw_sync);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera launch + sync", safe_sync,
              safe_sync / raw_sync);
  std::printf("%-40s %10.2f us\n", "raw launch, back to back", raw_queued);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera launch, back to back", safe_queued,
              safe_queued / raw_queued);
  std::printf("%-40s %10.2f us in the launch call, %.2f us in sync()\n",
              "  of which, on the host (mean)", in_launch / timed_calls * 1e6,
              in_wait / timed_calls * 1e6);
  const double per = profile.launches ? 1e-3 / static_cast<double>(profile.launches) : 0;
  std::printf("%-40s %10.2f us checks, %.2f lookup, %.2f packing, %.2f ordering + queueing\n",
              "  the launch call, by phase (mean)", profile.checks_ns * per,
              profile.lookup_ns * per, profile.pack_ns * per, profile.start_ns * per);
  std::printf("%-40s %10.2f us\n", "raw chain of 8, one sync (per kernel)", raw_chain);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera chain of 8, one sync (per kernel)",
              safe_chain, safe_chain / raw_chain);
  runtime::gpu_free(gpu, z_raw);
  runtime::gpu_free(gpu, x_raw);
  return 0;
}

// Launch overhead on the GPU: a kernel that adds 1 to 1024 floats, launched and waited for one at
// a time, and launched back to back (a few in flight), through Tessera's safe path and through the
// CUDA driver directly (cuLaunchKernel of the same work compiled by NVRTC, cuStreamSynchronize).
// Then, each beside its raw twin: a chain of 8 dependent kernels with one wait; the same 8 as a
// graph (Tessera's capture()/replay() beside a CUDA graph captured from the raw launches),
// replayed back to back, also with a kernel that has an error report; and two kernels that each
// fill half the multiprocessors, on one stream and on two (how much the second stream overlaps
// them); and sync() of a launch that has finished (host time only). Prints microseconds per kernel,
// the median of rounds, and the ratio to the raw launch (target in DESIGN.md: the safe sync path at
// most 1.2x the raw one).
//
//   launch [launches per round=2000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include <tessera/runtime/graph.hpp>
#include <tessera/runtime/stream.hpp>
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
// The same with an error report: an unpadded load (of the output's own tile, never outside x)
// is checked on the device, and a failure reported at sync.
TESSERA_KERNEL(add_one_checked, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(0)}, {1024}, Pad::none()) + 1.0f);
};
// A long dependent chain per element: a block that stays on its multiprocessor a while.
TESSERA_KERNEL(spin, Out<float> z, In<float> x, Scalar<int32_t> n) {
  Tile<float> acc = load_like(x, z);
  for_range(0, n, [&](Index) { acc = acc * 0.999f + 1.0f; });
  z.store(acc);
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
}
extern "C" __global__ void spin_raw(float* z, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float acc = x[i];
  for (int k = 0; k < n; ++k) acc = acc * 0.999f + 1.0f;
  z[i] = acc;
})";

// The 8 kernels of a chain per graph, and graphs replayed back to back per wait.
constexpr int kGraphKernels = 8;
constexpr int kReplaysPerWait = 16;
// Iterations of spin: tens of microseconds per kernel, far above the cost of issuing it.
constexpr int kSpin = 20000;

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
  const cuda::LoadedKernel raw_spin =
      cuda::load_kernel(ctx, compiled.cubin, "spin_raw", "spin_raw", 0);
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
  // Back to back: a LaunchRing of eight outputs, timed as the raw loop is (no clock read inside
  // the loop). Then a second pass splits each step's host time into the launch call and the wait
  // for the oldest launch: with a clock read on each side of each (which costs what `clock read`
  // says, more on some machines than the runtime's own work).
  bool split = false;
  double in_launch = 0, in_step = 0;  // host seconds, in the split pass
  auto launch_one = [&](Partition<float, 1> out) {
    if (!split) return add_one(std::move(out), x);
    const auto t0 = Clock::now();
    auto pending = add_one(std::move(out), x);
    in_launch += std::chrono::duration<double>(Clock::now() - t0).count();
    return pending;
  };
  std::vector<Partition<float, 1>> outs;
  outs.push_back(std::move(z));
  for (int i = 1; i < 8; ++i) outs.push_back(zeros<float>({kN}, gpu).partition({kN}));
  LaunchRing ring(launch_one, std::move(outs));
  const double safe_queued = us_per_call(calls, [&] { ring.relaunch_oldest(); });
  split = true;
  for (int i = 0; i < calls; ++i) {
    const auto t0 = Clock::now();
    ring.relaunch_oldest();
    in_step += std::chrono::duration<double>(Clock::now() - t0).count();
  }
  split = false;
  const double clock_read = us_per_call(calls, [] { (void)Clock::now(); });
  const double timed_calls = calls;
  const double in_wait = in_step - in_launch;

  // sync() of a launch that finished long ago, as at the head of the ring: 8 launches on outputs
  // of their own, the last waited for (untimed: the stream's timeline then knows all 8 ended),
  // then each synced, timed. No driver call is needed; what is left is the runtime's own work.
  std::vector<Partition<float, 1>> sync_outs;
  for (int i = 0; i < 8; ++i) sync_outs.push_back(zeros<float>({kN}, gpu).partition({kN}));
  std::vector<decltype(add_one(std::move(sync_outs[0]), x))> sync_pending;
  sync_pending.reserve(sync_outs.size());
  auto sync_round = [&] {
    double us = 0;
    int synced = 0;
    for (; synced < calls; synced += static_cast<int>(sync_outs.size())) {
      for (Partition<float, 1>& out : sync_outs) sync_pending.push_back(add_one(std::move(out), x));
      sync_pending.back().wait();
      const auto t0 = Clock::now();
      for (size_t i = 0; i < sync_outs.size(); ++i)
        sync_outs[i] = std::get<0>(std::move(sync_pending[i]).sync());
      us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      sync_pending.clear();
    }
    return us / synced;
  };
  (void)sync_round();
  std::vector<double> sync_rounds;
  for (int r = 0; r < kRounds; ++r) sync_rounds.push_back(sync_round());
  std::sort(sync_rounds.begin(), sync_rounds.end());
  const double finished_sync = sync_rounds[sync_rounds.size() / 2];

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

  // Graphs: the same 8 ping-pong kernels, captured once. Raw: a CUDA graph captured from the 8
  // raw launches on a stream of its own, cuGraphLaunch'ed back to back.
  CUstream capture_stream = nullptr;
  TESSERA_CU(cuStreamCreate, &capture_stream, CU_STREAM_NON_BLOCKING);
  TESSERA_CU(cuStreamBeginCapture, capture_stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  for (int i = 0; i < kGraphKernels; ++i) {
    void* ping[] = {i % 2 ? &xp : &zp, i % 2 ? &zp : &xp, &n};
    TESSERA_CU(cuLaunchKernel, raw.function, 1, 1, 1, 1024, 1, 1, 0, capture_stream, ping, nullptr);
  }
  CUgraph raw_graph = nullptr;
  CUgraphExec raw_exec = nullptr;
  TESSERA_CU(cuStreamEndCapture, capture_stream, &raw_graph);
  TESSERA_CU(cuGraphInstantiateWithFlags, &raw_exec, raw_graph, 0);
  const double raw_graph_us = us_per_call(calls / (kGraphKernels * kReplaysPerWait) + 1,
                                          [&] {
                                            for (int r = 0; r < kReplaysPerWait; ++r)
                                              TESSERA_CU(cuGraphLaunch, raw_exec, ctx.stream());
                                            TESSERA_CU(cuStreamSynchronize, ctx.stream());
                                          }) /
                              (kGraphKernels * kReplaysPerWait);
  Graph chain8 = capture("chain of 8", [&] {
    for (int i = 0; i < kGraphKernels; ++i) {
      auto f = add_one(std::move(spare), cur);
      cur = Tensor<float, 1>();
      auto [out, in] = std::move(f).sync();  // recorded, not run: returns at once
      spare = std::move(in).partition({kN});
      cur = std::move(out).unpartition();
    }
  });
  const double safe_graph_us = us_per_call(calls / (kGraphKernels * kReplaysPerWait) + 1,
                                           [&] {
                                             for (int r = 0; r + 1 < kReplaysPerWait; ++r)
                                               chain8.replay();
                                             chain8.replay().sync();
                                           }) /
                               (kGraphKernels * kReplaysPerWait);
  const float after_plain = cur.to_vector()[0];
  // The same graph of a kernel with an error report: the launches write the report in place,
  // and the graph copies it out once after them. Tensors of its own: chain8 holds cur and spare.
  Tensor<float, 1> checked_cur = ones<float>({kN}, gpu);
  Partition<float, 1> checked_spare = zeros<float>({kN}, gpu).partition({kN});
  Graph checked8 = capture("checked chain of 8", [&] {
    for (int i = 0; i < kGraphKernels; ++i) {
      auto f = add_one_checked(std::move(checked_spare), checked_cur);
      checked_cur = Tensor<float, 1>();
      auto [out, in] = std::move(f).sync();
      checked_spare = std::move(in).partition({kN});
      checked_cur = std::move(out).unpartition();
    }
  });
  const double checked_graph_us = us_per_call(calls / (kGraphKernels * kReplaysPerWait) + 1,
                                              [&] {
                                                for (int r = 0; r + 1 < kReplaysPerWait; ++r)
                                                  checked8.replay();
                                                checked8.replay().sync();
                                              }) /
                                  (kGraphKernels * kReplaysPerWait);
  if (after_plain < 2.0f || checked_cur.to_vector()[0] < 2.0f) {
    std::fprintf(stderr, "launch: the graph's replays did not run\n");
    return 1;
  }

  // Two kernels of half the multiprocessors each, on one stream and on two: per pair.
  const int half = std::max(1, ctx.props().multiprocessors / 2);
  const int64_t spin_n = int64_t{half} * 1024;
  void* spin_a = runtime::gpu_allocate(gpu, spin_n * sizeof(float));
  void* spin_b = runtime::gpu_allocate(gpu, spin_n * sizeof(float));
  void* spin_x = runtime::gpu_allocate(gpu, spin_n * sizeof(float));
  runtime::gpu_synchronize(gpu);
  CUstream raw_side = nullptr;
  TESSERA_CU(cuStreamCreate, &raw_side, CU_STREAM_NON_BLOCKING);
  CUdeviceptr sa = reinterpret_cast<CUdeviceptr>(spin_a),
              sb = reinterpret_cast<CUdeviceptr>(spin_b),
              sx = reinterpret_cast<CUdeviceptr>(spin_x);
  TESSERA_CU(cuMemsetD32Async, sx, 0, static_cast<size_t>(spin_n), ctx.stream());
  int iterations = kSpin;
  void* spin_a_params[] = {&sa, &sx, &iterations};
  void* spin_b_params[] = {&sb, &sx, &iterations};
  auto raw_pair = [&](CUstream second) {
    TESSERA_CU(cuLaunchKernel, raw_spin.function, static_cast<unsigned>(half), 1, 1, 1024, 1, 1, 0,
               ctx.stream(), spin_a_params, nullptr);
    TESSERA_CU(cuLaunchKernel, raw_spin.function, static_cast<unsigned>(half), 1, 1, 1024, 1, 1, 0,
               second, spin_b_params, nullptr);
    TESSERA_CU(cuStreamSynchronize, ctx.stream());
    TESSERA_CU(cuStreamSynchronize, second);
  };
  const int pairs = std::max(5, calls / 100);
  const double raw_one_stream = us_per_call(pairs, [&] { raw_pair(ctx.stream()); });
  const double raw_two_streams = us_per_call(pairs, [&] { raw_pair(raw_side); });
  const auto sx_t = ones<float>({spin_n}, gpu);
  Partition<float, 1> pa = zeros<float>({spin_n}, gpu).partition({1024});
  Partition<float, 1> pb = zeros<float>({spin_n}, gpu).partition({1024});
  const Stream first(gpu), second(gpu);
  auto safe_pair = [&](const Stream& other) {
    std::optional<decltype(spin(std::move(pa), sx_t, kSpin))> fa, fb;
    {
      const StreamScope on(first);
      fa.emplace(spin(std::move(pa), sx_t, kSpin));
    }
    {
      const StreamScope on(other);
      fb.emplace(spin(std::move(pb), sx_t, kSpin));
    }
    pa = std::get<0>(std::move(*fa).sync());
    pb = std::get<0>(std::move(*fb).sync());
  };
  const double safe_one_stream = us_per_call(pairs, [&] { safe_pair(first); });
  const double safe_two_streams = us_per_call(pairs, [&] { safe_pair(second); });

  std::printf("%-40s %10.2f us\n", "raw launch + sync", raw_sync);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera launch + sync", safe_sync,
              safe_sync / raw_sync);
  std::printf("%-40s %10.2f us\n", "raw launch, back to back", raw_queued);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera launch, back to back", safe_queued,
              safe_queued / raw_queued);
  std::printf("%-40s %10.2f us in the launch call, %.2f us in sync() (timed apart)\n",
              "  of which, on the host (mean)", in_launch / timed_calls * 1e6,
              in_wait / timed_calls * 1e6);
  std::printf("%-40s %10.3f us\n", "  clock read (steady_clock::now)", clock_read);
  std::printf("%-40s %10.3f us\n", "tessera sync() of a finished launch", finished_sync);
  const double per = profile.launches ? 1e-3 / static_cast<double>(profile.launches) : 0;
  std::printf(
      "%-40s %10.2f us checks, %.2f lookup, %.2f packing, %.2f ordering, %.2f queueing (driver)\n",
      "  the launch call, by phase (mean)", profile.checks_ns * per, profile.lookup_ns * per,
      profile.pack_ns * per, profile.start_ns * per, profile.queue_ns * per);
  std::printf(
      "%-40s %10.2f us the driver's launch call (parameters packed), %.2f marks, %.2f rest\n",
      "  of the queueing (mean)", profile.driver_launch_ns * per, profile.marks_ns * per,
      (profile.queue_ns - profile.driver_launch_ns - profile.marks_ns) * per);
  std::printf("%-40s %10.2f us\n", "raw chain of 8, one sync (per kernel)", raw_chain);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera chain of 8, one sync (per kernel)",
              safe_chain, safe_chain / raw_chain);
  std::printf("%-40s %10.2f us\n", "raw graph of 8, replayed (per kernel)", raw_graph_us);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera graph of 8, replayed (per kernel)",
              safe_graph_us, safe_graph_us / raw_graph_us);
  std::printf("%-40s %10.2f us  (%.2fx raw)\n", "tessera graph of 8 error-checked (per k.)",
              checked_graph_us, checked_graph_us / raw_graph_us);
  std::printf("%-40s %10.2f us one stream, %.2f us two (overlap %.2fx)\n",
              "raw 2 kernels of half the SMs (per pair)", raw_one_stream, raw_two_streams,
              raw_one_stream / raw_two_streams);
  std::printf("%-40s %10.2f us one stream, %.2f us two (overlap %.2fx)\n",
              "tessera 2 kernels of half the SMs", safe_one_stream, safe_two_streams,
              safe_one_stream / safe_two_streams);
  TESSERA_CU(cuGraphExecDestroy, raw_exec);
  TESSERA_CU(cuGraphDestroy, raw_graph);
  TESSERA_CU(cuStreamDestroy, capture_stream);
  TESSERA_CU(cuStreamDestroy, raw_side);
  runtime::gpu_free(gpu, spin_a);
  runtime::gpu_free(gpu, spin_b);
  runtime::gpu_free(gpu, spin_x);
  runtime::gpu_free(gpu, z_raw);
  runtime::gpu_free(gpu, x_raw);
  return 0;
}

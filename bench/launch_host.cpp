// The host's share of a launch, without a GPU: the same kernel as bench/launch, launched back to
// back on the CPU backend, whose "driver call" is queueing a job for a worker. A CPU backend
// launch runs the same host path as a GPU one (checks, specialization lookup, packing, ordering,
// the Future) up to the driver call, so this times what the runtime adds to cuLaunchKernel, and
// is what to run under `perf record` (--call-graph dwarf) to see where it goes.
//
//   launch_host [launches per round=20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <tessera/tessera.hpp>

#include "tessera/runtime/launch_profile.hpp"

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(add_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};

namespace {
constexpr int64_t kN = 1024;
constexpr int kRounds = 5;
constexpr int kBatch = 64;
using Clock = std::chrono::steady_clock;
}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20000;
  const Device cpu = Device::cpu();
  auto x = ones<float>({kN}, cpu);
  Partition<float, 1> z = zeros<float>({kN}, cpu).partition({kN});
  // Chained: each launch writes z after the one before (ordered by the runtime, not the host),
  // so the host never waits; the workers drain behind it between rounds.
  auto launch = [&] {
    auto [z1, x1] = add_one(std::move(z), x).chain();
    z = std::move(z1);
  };
  auto drain = [&] {  // a host read waits for the last launch
    Tensor<float, 1> t = std::move(z).unpartition();
    (void)t.to_vector();
    z = std::move(t).partition({kN});
  };
  for (int i = 0; i < calls / 10 + 1; ++i) launch();
  drain();
  // Batches of kBatch launches, drained between them (untimed): as on a GPU, a bounded number
  // is in flight, and the runtime's pools serve them.
  auto timed_round = [&] {
    double us = 0;
    for (int done = 0; done < calls; done += kBatch) {
      const auto t0 = Clock::now();
      for (int i = 0; i < kBatch; ++i) launch();
      us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      drain();
    }
    return us / ((calls + kBatch - 1) / kBatch * kBatch);
  };
  std::vector<double> rounds;
  for (int r = 0; r < kRounds; ++r) rounds.push_back(timed_round());
  std::sort(rounds.begin(), rounds.end());
  runtime::profile_launches(true);
  (void)timed_round();
  const runtime::LaunchProfile p = runtime::take_launch_profile();
  runtime::profile_launches(false);
  const double per = p.launches ? 1e-3 / static_cast<double>(p.launches) : 0;
  const double phases = (p.checks_ns + p.lookup_ns + p.pack_ns + p.start_ns + p.queue_ns) * per;
  std::printf(
      "# launch_host: %lld floats, CPU backend, median of %d rounds of %d chained launches (%d at "
      "a time)\n",
      static_cast<long long>(kN), kRounds, calls, kBatch);
  std::printf("launch call (host, us): %.3f\n", rounds[rounds.size() / 2]);
  std::printf(
      "  by phase (profiled run, us): checks %.3f, lookup %.3f, packing %.3f, ordering %.3f, "
      "queueing %.3f; outside the phases %.3f\n",
      p.checks_ns * per, p.lookup_ns * per, p.pack_ns * per, p.start_ns * per, p.queue_ns * per,
      rounds[rounds.size() / 2] - phases);
  drain();
  return 0;
}

// The host's share of a launch, without a GPU: the same kernel as bench/launch, launched back to
// back on the CPU backend, whose "driver call" is queueing a job for a worker. A CPU backend
// launch runs the same host path as a GPU one (checks, specialization lookup, packing, ordering,
// the Future) up to the driver call, so this times what the runtime adds to cuLaunchKernel, and
// is what to run under `perf record` (--call-graph dwarf) to see where it goes. A second row
// times sync() of a launch that has finished (the wait at the head of bench/launch's ring).
// Under `valgrind --tool=callgrind`, the inclusive instructions of launch_chained() and
// sync_finished() over their call counts are a launch's and a sync's
// (scripts/launch_instructions.sh).
//
//   launch_host [launches per round=20000]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>
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
constexpr int kRing = 8;
using Clock = std::chrono::steady_clock;
using Pending =
    decltype(add_one(std::declval<Partition<float, 1>>(), std::declval<const Tensor<float, 1>&>()));

// Out of line, so that a profile attributes one launch (or one sync) to each call.
[[gnu::noinline]] void launch_chained(Partition<float, 1>& z, const Tensor<float, 1>& x) {
  auto [z1, x1] = add_one(std::move(z), x).chain();
  z = std::move(z1);
}
[[gnu::noinline]] Partition<float, 1> sync_finished(Pending& f) {
  return std::get<0>(std::move(f).sync());
}
}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20000;
  const Device cpu = Device::cpu();
  auto x = ones<float>({kN}, cpu);
  Partition<float, 1> z = zeros<float>({kN}, cpu).partition({kN});
  // Chained: each launch writes z after the one before (ordered by the runtime, not the host),
  // so the host never waits; the workers drain behind it between rounds.
  auto launch = [&] { launch_chained(z, x); };
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

  // sync() of launches that have finished: kRing launches on outputs of their own, waited for
  // untimed (polled with ready()), then each synced, timed.
  std::vector<Partition<float, 1>> outs;
  outs.push_back(std::move(z));
  for (int i = 1; i < kRing; ++i) outs.push_back(zeros<float>({kN}, cpu).partition({kN}));
  std::vector<Pending> pending;
  pending.reserve(kRing);
  auto sync_round = [&] {
    double us = 0;
    int synced = 0;
    for (; synced < calls; synced += kRing) {
      for (Partition<float, 1>& out : outs) pending.push_back(add_one(std::move(out), x));
      for (const Pending& f : pending)
        while (!f.ready()) std::this_thread::yield();
      const auto t0 = Clock::now();
      for (int i = 0; i < kRing; ++i) outs[i] = sync_finished(pending[i]);
      us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      pending.clear();
    }
    return us / synced;
  };
  (void)sync_round();
  std::vector<double> sync_rounds;
  for (int r = 0; r < kRounds; ++r) sync_rounds.push_back(sync_round());
  std::sort(sync_rounds.begin(), sync_rounds.end());
  std::printf("sync() of a finished launch (host, us): %.3f\n",
              sync_rounds[sync_rounds.size() / 2]);
  return 0;
}

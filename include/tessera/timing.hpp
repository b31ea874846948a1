// Timing a kernel the way Tessera's own benchmarks do (bench/), for users' kernels:
//
//   std::vector<Partition<float, 1>> outs;              // the ring: launches in flight at once
//   for (int i = 0; i < 3; ++i) outs.push_back(zeros<float>({n}).partition({4096}));
//   const Timing t = time_launches(
//       [&](Partition<float, 1> z) { return add(std::move(z), x, y); }, outs);
//   std::printf("add: %.3f ms\n", t.median_ms);         // outs holds the outputs again
//
// What it does, and why:
//  - A ring of async launches. A launch owns its output until it is done, so one output cannot
//    be in two launches at once; with several outputs, the oldest launch is waited for and its
//    output launched again while the others stay queued behind the running one, so the GPU runs
//    kernels back to back and the host's launch and wait costs hide behind them (as in a real
//    pipeline). The time per launch is the wall time of a round divided by its launches.
//  - Warm-up first: the first launch compiles the kernel (or loads it from the JIT cache), and
//    clocks ramp up; then the number of launches a round needs to last `round_ms` is measured.
//  - The median of `rounds` rounds: robust against a round disturbed by the rest of the machine.
//  - Rotating inputs: a launch that takes `(Out out, int64_t i)` is told the launch's number, so
//    it can use `inputs[i % inputs.size()]`; inputs that together exceed the L2 cache then come
//    from memory each time, as they would in a model whose other layers ran in between.
//  - `flush_l2`: before each launch, a kernel writes a buffer larger than the L2 cache (256 MiB:
//    the H200's L2 is 60 MiB), so that even one set of inputs comes from memory; the time of the
//    flushes alone, measured the same way, is subtracted (and reported as flush_ms).
//
// Runs on any device, the CPU backend included (whose time is the interpreter's, not a GPU's).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera {

struct TimingOptions {
  int rounds = 7;              // timed rounds; the result is their median
  int warmup_rounds = 2;       // untimed rounds after the calibration
  int launches_per_round = 0;  // 0: as many as make a round last about round_ms
  double round_ms = 20;
  bool flush_l2 = false;  // write flush_bytes before each launch, and subtract that time
  int64_t flush_bytes = int64_t{256} << 20;
};

struct Timing {
  double median_ms = 0;  // per launch: the median round
  double min_ms = 0;     // the fastest and slowest rounds, per launch
  double max_ms = 0;
  std::vector<double> round_ms;  // every round, per launch, in the order they ran
  int launches_per_round = 0;
  double flush_ms = 0;  // per flush, already subtracted from the times above (flush_l2)
  // "0.123 ms per launch (median of 7 rounds of 250 launches; 0.120 to 0.131)".
  std::string str() const;
};

namespace runtime::timing {

// The part of time_launches that does not depend on the kernel: calibrates, warms up, times the
// rounds and, under flush_l2, the flushes, on `device`. `step()` waits for the oldest launch of
// the ring and launches again with its output. Throws UsageError for options out of range.
Timing time_steps(const std::function<void()>& step, Device device, const TimingOptions& options);

}  // namespace runtime::timing

// Times `launch`, which starts one launch with the output it is given and returns its Future
// (a kernel call: `k(std::move(out), x, y)`, not yet synced), and may take the launch's number
// as a second argument (`int64_t`) to rotate its inputs. `outs` are the outputs (partitions) the
// launches take turns with, at least one; as many launches are in flight as there are outputs
// (two or three keep a GPU busy). When it returns, `outs` holds the outputs again, each with the
// result of its last launch; when it throws, the outputs are lost (and `outs` is empty).
template <class Launch, class Out>
Timing time_launches(Launch&& launch, std::vector<Out>& outs, const TimingOptions& options = {}) {
  constexpr bool numbered = std::is_invocable_v<Launch&, Out, int64_t>;
  static_assert(numbered || std::is_invocable_v<Launch&, Out>,
                "time_launches: the launch must take the output, (Out out) or (Out out, int64_t "
                "launch_number), and return the kernel call's Future");
  if (outs.empty())
    fail<UsageError>(
        "time_launches: no outputs; pass at least one (two or three keep a GPU busy: "
        "each launch in flight needs its own output)");
  int64_t number = 0;
  auto start = [&](Out out) {
    if constexpr (numbered)
      return launch(std::move(out), number++).async();
    else
      return launch(std::move(out)).async();
  };
  using Pending = decltype(start(std::declval<Out>()));
  const Device device = outs.front().device();
  std::vector<Out> ring_outs = std::move(outs);
  outs.clear();
  std::vector<Pending> ring;  // a circular buffer: `oldest` is the next to wait for
  ring.reserve(ring_outs.size());
  for (Out& out : ring_outs) ring.push_back(start(std::move(out)));
  size_t oldest = 0;
  const Timing t = runtime::timing::time_steps(
      [&] {
        Out out = std::get<0>(std::move(ring[oldest]).sync());
        ring[oldest] = start(std::move(out));
        oldest = (oldest + 1) % ring.size();
      },
      device, options);
  for (size_t i = 0; i < ring.size(); ++i)
    outs.push_back(std::get<0>(std::move(ring[(oldest + i) % ring.size()]).sync()));
  return t;
}

}  // namespace tessera

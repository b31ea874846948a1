// Back-to-back launches of a tile kernel, for timing. A launch owns its output until it is done,
// so one output cannot be in two launches at once: a ring of outputs, the oldest waited for and
// launched again, keeps the others queued behind the running launch, and the host's launch and
// wait costs hide behind the kernels. Destroying the ring waits for what is still queued.
// wait_all() ends a timed round with nothing in flight, so the round's time holds exactly its own
// launches (with a few launches a round, work still queued at the end would otherwise count
// toward the next round); take_finished() then hands out an output the timed launches wrote, for
// the bench to check.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <tuple>
#include <utility>
#include <vector>

template <class Launch, class Out>
class LaunchRing {
 public:
  // `launch(out)` starts one launch with `out` as its first argument; `outs` are the ring.
  LaunchRing(Launch launch, std::vector<Out> outs) : launch_(std::move(launch)) {
    for (Out& out : outs) ring_.push_back(launch_(std::move(out)).async());
  }

  // Launches again with a finished output, or waits for the oldest launch and launches again
  // with its output.
  void relaunch_oldest() {
    const Clock::time_point t0 = timed_ ? Clock::now() : Clock::time_point{};
    Out out = finished_.empty() ? wait_oldest() : take_finished();
    const Clock::time_point t1 = timed_ ? Clock::now() : Clock::time_point{};
    ring_.push_back(launch_(std::move(out)).async());
    if (!timed_) return;
    wait_s_ += std::chrono::duration<double>(t1 - t0).count();
    launch_s_ += std::chrono::duration<double>(Clock::now() - t1).count();
    ++steps_;
  }

  // Where the host's time goes from now on: each relaunch_oldest() timed in its wait for the
  // oldest launch and in its launch call (two clock reads a step).
  void time_host(bool on) {
    timed_ = on;
    wait_s_ = launch_s_ = 0;
    steps_ = 0;
  }
  // Mean microseconds a step spent waiting and launching since time_host(true).
  double wait_us() const { return steps_ ? wait_s_ * 1e6 / static_cast<double>(steps_) : 0; }
  double launch_us() const { return steps_ ? launch_s_ * 1e6 / static_cast<double>(steps_) : 0; }

  // Waits for every launch still queued; their outputs are finished (relaunched next).
  void wait_all() {
    while (!ring_.empty()) finished_.push_back(wait_oldest());
  }

  // A finished output, the oldest first (after wait_all(): the last launches' outputs).
  Out take_finished() {
    Out out = std::move(finished_.front());
    finished_.pop_front();
    return out;
  }
  bool has_finished() const { return !finished_.empty(); }

 private:
  using Clock = std::chrono::steady_clock;
  using Pending = decltype(std::declval<Launch&>()(std::declval<Out>()).async());
  Out wait_oldest() {
    Out out = std::get<0>(std::move(ring_.front()).sync());
    ring_.pop_front();
    return out;
  }
  Launch launch_;
  std::deque<Pending> ring_;
  std::deque<Out> finished_;
  bool timed_ = false;
  double wait_s_ = 0, launch_s_ = 0;
  long long steps_ = 0;
};

// Median milliseconds per launch over 7 rounds of `iterations` relaunches, after 6 to warm up.
// Drained: each round starts and ends with nothing queued (exact for a few long launches a round,
// at the cost of one launch's start-up a round); else rounds run into each other (steady state,
// for many short launches a round).
enum class Rounds { Drained, Overlapped };
template <class Ring>
double median_ms_per_launch(Ring& ring, int iterations, Rounds rounds_are = Rounds::Overlapped) {
  using Clock = std::chrono::steady_clock;
  const bool drained = rounds_are == Rounds::Drained;
  for (int w = 0; w < 6; ++w) ring.relaunch_oldest();
  if (drained) ring.wait_all();
  std::vector<double> rounds;
  for (int r = 0; r < 7; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) ring.relaunch_oldest();
    if (drained) ring.wait_all();
    rounds.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
                     iterations);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

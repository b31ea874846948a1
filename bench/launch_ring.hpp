// Back-to-back launches of a tile kernel, for timing. A launch owns its output until it is done,
// so one output cannot be in two launches at once: a ring of outputs, the oldest waited for and
// launched again, keeps the others queued behind the running launch, and the host's launch and
// wait costs hide behind the kernels. Destroying the ring waits for what is still queued.
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

  // Waits for the oldest launch and launches again with its output.
  void relaunch_oldest() {
    Out out = std::get<0>(std::move(ring_.front()).sync());
    ring_.pop_front();
    ring_.push_back(launch_(std::move(out)).async());
  }

 private:
  using Pending = decltype(std::declval<Launch&>()(std::declval<Out>()).async());
  Launch launch_;
  std::deque<Pending> ring_;
};

// Median milliseconds per launch over 7 rounds of `iterations` relaunches, after 6 to warm up.
template <class Ring>
double median_ms_per_launch(Ring& ring, int iterations) {
  using Clock = std::chrono::steady_clock;
  for (int w = 0; w < 6; ++w) ring.relaunch_oldest();
  std::vector<double> rounds;
  for (int r = 0; r < 7; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) ring.relaunch_oldest();
    rounds.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
                     iterations);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

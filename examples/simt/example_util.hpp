// What the SIMT examples share: skipping cleanly where there is no GPU, and timing a launch.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <tessera/runtime/gpu.hpp>

namespace simt_example {

// False (after printing a "skipped" line) when no GPU can run SIMT kernels: the examples need
// one, and a machine without one is not a failure (scripts/demo.sh runs them everywhere).
inline bool gpu_or_skip(const char* example) {
  std::string why;
  if (tessera::runtime::gpu_usable(&why)) return true;
  std::printf("%s: skipped: SIMT kernels need a CUDA GPU (%s)\n", example, why.c_str());
  return false;
}

// Seconds per launch of `launch(out)`, which queues one launch writing `out` and returns its
// Future: the median over `batches` batches of `per_batch` launches, each batch ended by waiting
// for every launch in flight, after one warm-up batch. A launch owns its output until it is done,
// so the outputs `outs` take turns: the oldest launch is waited for and its output launched again,
// and the others stay queued behind the running one (back to back, as in a real pipeline).
template <class Launch, class Out>
double seconds_per_launch(int batches, int per_batch, Launch launch, std::vector<Out> outs) {
  using Pending = decltype(launch(std::declval<Out>()).async());
  std::deque<Pending> ring;
  for (Out& out : outs) ring.push_back(launch(std::move(out)).async());
  std::vector<double> t;
  for (int b = 0; b <= batches; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) {
      Out out = std::get<0>(std::move(ring.front()).sync());
      ring.pop_front();
      ring.push_back(launch(std::move(out)).async());
    }
    for (const Pending& p : ring) p.wait();
    if (b > 0)
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                  per_batch);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace simt_example

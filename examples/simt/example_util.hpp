// What the SIMT examples share: skipping cleanly where there is no GPU, and timing a launch.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
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

// Seconds per launch: `launch` queues one launch (without waiting); the median over `batches`
// batches of `per_batch` launches, each batch ended by waiting for the device, after one warm-up
// batch. Back-to-back launches, as a kernel in a real pipeline runs.
template <class F>
double seconds_per_launch(tessera::Device d, int batches, int per_batch, F&& launch) {
  std::vector<double> t;
  for (int b = 0; b <= batches; ++b) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < per_batch; ++i) launch();
    tessera::runtime::gpu_synchronize(d);
    if (b > 0)
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                  per_batch);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace simt_example

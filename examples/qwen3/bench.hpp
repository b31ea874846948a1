// The engine's speed: prefill tokens/s, and decode tokens/s at batch one with each step's fraction
// of the memory-bandwidth roofline (the bytes a step must read — every weight once, and the KV
// cache up to the current position — over the GPU's copy bandwidth).
#pragma once

#include "model.hpp"

namespace qwen3 {

struct BenchOptions {
  int64_t prompt = 512;      // prefill length
  int64_t steps = 64;        // decode steps timed
  double bandwidth_gbs = 0;  // bytes/s / 1e9 the roofline assumes (measured copy bandwidth)
};

// Warms up (every kernel compiled), then times one prefill and `steps` greedy decode steps in T;
// prints the numbers, one line each. c.max_positions must hold prompt + steps + 2.
template <tessera::Element T>
void bench(const char* name, const Config& c, const HostWeights& w, const BenchOptions& o);

}  // namespace qwen3

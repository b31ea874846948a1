// The engine's speed: prefill tokens/s, and decode tokens/s at a few batch sizes with each step's
// fraction of the memory-bandwidth roofline (the bytes a step must read — every weight once, and
// every sequence's KV cache up to its position — over the GPU's copy bandwidth).
#pragma once

#include <vector>

#include "model.hpp"

namespace qwen3 {

struct BenchOptions {
  int64_t prompt = 512;      // prefill length
  int64_t steps = 64;        // decode steps timed
  double bandwidth_gbs = 0;  // bytes/s / 1e9 the roofline assumes (measured copy bandwidth)
  std::vector<int64_t> batches{1, 4, 16, 64};  // graph decode timed at each
  int64_t gemm_from = 16;   // Model::set_batch's: steps of this many sequences use the gemm
  bool both_paths = false;  // also time the other projection path at each batch above one
};

// Warms up (every kernel compiled), then times one prefill, `steps` eager decode steps at batch
// one and `steps` graph decode steps at each batch size in T; prints the numbers, one line each.
// c.max_positions must hold prompt + steps + 2.
template <tessera::Element T>
void bench(const char* name, const Config& c, const HostWeights& w, const BenchOptions& o);

}  // namespace qwen3

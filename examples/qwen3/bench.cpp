// The engine's speed (bench.hpp).
#include "bench.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace qwen3 {

using namespace tessera;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// With QWEN3_PROFILE=1, brackets the timed graph decode steps with cuProfilerStart/Stop, so that
// `ncu --profile-from-start off` profiles only those (the driver is already loaded by then).
void profiler(bool start) {
  if (std::getenv("QWEN3_PROFILE") == nullptr) return;
  void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (cuda == nullptr) return;
  using Fn = int (*)();
  if (auto f = reinterpret_cast<Fn>(dlsym(cuda, start ? "cuProfilerStart" : "cuProfilerStop")))
    (void)f();
}

// The last token of each sequence's row of tokens.
std::vector<int32_t> last_tokens(const std::vector<std::vector<int32_t>>& rows) {
  std::vector<int32_t> out;
  for (const auto& r : rows) out.push_back(r.back());
  return out;
}

}  // namespace

template <Element T>
void bench(const char* name, const Config& c, const HostWeights& w, const BenchOptions& o) {
  if (o.prompt + o.steps + 2 > c.max_positions)
    throw UsageError("bench: " + std::to_string(o.prompt + o.steps + 2) +
                     " positions do not fit the cache's " + std::to_string(c.max_positions));
  Model<T> model(c, w);
  std::vector<int32_t> prompt;
  for (int64_t i = 0; i < o.prompt; ++i)
    prompt.push_back(static_cast<int32_t>((i * 7919 + 13) % c.vocab));
  // Warm-up: a prefill and two decode steps compile every kernel (and fill the JIT cache).
  int32_t token = Model<T>::greedy(model.prefill(prompt));
  for (int i = 0; i < 2; ++i) token = Model<T>::greedy(model.decode(token));

  auto t0 = std::chrono::steady_clock::now();
  token = Model<T>::greedy(model.prefill(prompt));  // the host read waits for the work
  const double prefill_s = seconds_since(t0);
  // Eager decode: each step's launches from the host, and the host reads each step's token.
  t0 = std::chrono::steady_clock::now();
  for (int64_t s = 0; s < o.steps; ++s) token = Model<T>::greedy(model.decode(token));
  const double eager_s = seconds_since(t0);
  std::printf("qwen3 bench %s: prefill of %lld tokens in %.2f ms = %.0f tokens/s\n", name,
              static_cast<long long>(o.prompt), prefill_s * 1e3,
              static_cast<double>(o.prompt) / prefill_s);
  const double eager_step_s = eager_s / static_cast<double>(o.steps);
  std::printf(
      "qwen3 bench %s: eager decode (no graph), batch 1: %.3f ms a step = %.1f tokens/s (the host "
      "launches every kernel and reads each step's token)\n",
      name, eager_step_s * 1e3, 1.0 / eager_step_s);
  std::fflush(stdout);  // a run stopped by a timeout keeps what it measured

  // Bytes a decode step must read: every weight once (the embedding: one row a sequence), and
  // each sequence's keys and values up to its position, on average the middle of the timed steps.
  const double e = sizeof(T);
  const double per_layer = 2.0 * static_cast<double>(c.hidden) +  // the two norms
                           2.0 * static_cast<double>(c.head_dim) +
                           static_cast<double>(c.hidden * (c.heads + 2 * c.kv_heads) * c.head_dim) +
                           static_cast<double>(c.heads * c.head_dim * c.hidden) +
                           3.0 * static_cast<double>(c.hidden * c.intermediate);
  const double weights = e * (static_cast<double>(c.layers) * per_layer +
                              static_cast<double>(c.hidden * c.vocab) +  // the LM head
                              2.0 * static_cast<double>(c.hidden));      // embedding row, norm
  const double context = static_cast<double>(o.prompt) + 1 + static_cast<double>(o.steps) / 2;
  const double kv_one = e * 2.0 * static_cast<double>(c.layers * c.kv_heads * c.head_dim) * context;

  // Graph decode at each batch size: B copies of the prompt prefilled one by one, the first
  // generate() captures the step (untimed), then the timed steps are replays queued back to back,
  // their tokens read at the end. With --gemm-both, a batch of more than one is timed with its
  // projections by linear and by the gemm; the first line is the path set_batch picks.
  for (const int64_t batch : o.batches) {
    const bool gemm = batch >= o.gemm_from;
    std::vector<bool> paths{gemm};
    if (o.both_paths && batch > 1) paths.push_back(!gemm);
    for (size_t path = 0; path < paths.size(); ++path) {
      model.set_batch(batch, paths[path] ? 1 : batch + 1);
      std::vector<int32_t> tokens;
      for (int64_t b = 0; b < batch; ++b)
        tokens.push_back(Model<T>::greedy(model.prefill(prompt, b)));
      tokens = last_tokens(model.generate(tokens, 1));
      const bool profile = batch == o.batches.front() && path == 0;
      if (profile) profiler(true);
      t0 = std::chrono::steady_clock::now();
      tokens = last_tokens(model.generate(tokens, o.steps));
      const double step_s = seconds_since(t0) / static_cast<double>(o.steps);
      if (profile) profiler(false);
      const double kv = kv_one * static_cast<double>(batch);
      // The table (scripts/qwen3_table.py) reads "decode batch B:" lines and their "% of the
      // bandwidth roofline"; the other path's line is named apart.
      std::printf(
          "qwen3 bench %s: decode batch %lld%s: %lld steps, %.3f ms a step = %.1f tokens/s; "
          "reads %.1f MB of weights + %.1f MB of KV cache",
          name, static_cast<long long>(batch),
          path == 0 ? "" : (paths[path] ? " (other path: gemm)" : " (other path: linear)"),
          static_cast<long long>(o.steps), step_s * 1e3, static_cast<double>(batch) / step_s,
          weights / 1e6, kv / 1e6);
      if (o.bandwidth_gbs > 0) {
        const double roofline_s = (weights + kv) / (o.bandwidth_gbs * 1e9);
        std::printf(": %.1f us at %.0f GB/s, %.1f%% of the %sroofline", roofline_s * 1e6,
                    o.bandwidth_gbs, 100.0 * roofline_s / step_s, path == 0 ? "bandwidth " : "");
      }
      std::printf(" (projections by %s; each step one replay of the captured step graph)\n",
                  paths[path] ? "gemm" : "linear");
      std::fflush(stdout);
    }
  }
  if (o.bandwidth_gbs <= 0)
    std::printf("qwen3 bench %s: pass --bandwidth GB/s for the roofline fraction\n", name);
  (void)token;
}

template void bench<float>(const char*, const Config&, const HostWeights&, const BenchOptions&);
template void bench<bfloat16>(const char*, const Config&, const HostWeights&, const BenchOptions&);

}  // namespace qwen3

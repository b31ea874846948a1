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
  // Graph decode: the first generate() captures the step (untimed), then the timed steps are
  // replays queued back to back, their tokens read at the end.
  token = Model<T>::greedy(model.prefill(prompt));
  token = model.generate(token, 1).back();
  profiler(true);
  t0 = std::chrono::steady_clock::now();
  token = model.generate(token, o.steps).back();
  const double decode_s = seconds_since(t0);
  profiler(false);

  // Bytes a decode step must read: every weight once (the embedding: one row), and each layer's
  // keys and values up to the position, on average the middle of the timed steps.
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
  const double kv = e * 2.0 * static_cast<double>(c.layers * c.kv_heads * c.head_dim) * context;
  const double step_s = decode_s / static_cast<double>(o.steps);
  std::printf("qwen3 bench %s: prefill of %lld tokens in %.2f ms = %.0f tokens/s\n", name,
              static_cast<long long>(o.prompt), prefill_s * 1e3,
              static_cast<double>(o.prompt) / prefill_s);
  std::printf(
      "qwen3 bench %s: decode batch 1: %lld steps, %.3f ms a step = %.1f tokens/s (greedy, "
      "each step one replay of the captured step graph, the tokens read at the end)\n",
      name, static_cast<long long>(o.steps), step_s * 1e3, 1.0 / step_s);
  const double eager_step_s = eager_s / static_cast<double>(o.steps);
  std::printf(
      "qwen3 bench %s: eager decode (no graph): %.3f ms a step = %.1f tokens/s (the host launches "
      "every kernel and reads each step's token)\n",
      name, eager_step_s * 1e3, 1.0 / eager_step_s);
  std::printf("qwen3 bench %s: a step reads %.1f MB of weights + %.1f MB of KV cache", name,
              weights / 1e6, kv / 1e6);
  if (o.bandwidth_gbs > 0) {
    const double roofline_s = (weights + kv) / (o.bandwidth_gbs * 1e9);
    std::printf(": %.1f us at %.0f GB/s, so %.1f%% of the bandwidth roofline\n", roofline_s * 1e6,
                o.bandwidth_gbs, 100.0 * roofline_s / step_s);
  } else {
    std::printf(" (pass --bandwidth GB/s for the roofline fraction)\n");
  }
  (void)token;
}

template void bench<float>(const char*, const Config&, const HostWeights&, const BenchOptions&);
template void bench<bfloat16>(const char*, const Config&, const HostWeights&, const BenchOptions&);

}  // namespace qwen3

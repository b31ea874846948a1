// The engine against Hugging Face transformers' own Qwen3 model (scripts/qwen3_reference.py),
// loaded with the same weights: the logits of the prefill and of every decode step.
#pragma once

#include <string>

#include "model.hpp"

namespace qwen3 {

// Logits written by scripts/qwen3_reference.py: `tokens` (the prompt, then each greedy token),
// `prefill` [prompt, vocab] and `decode` [steps, vocab], f32.
struct HfLogits {
  std::vector<int32_t> tokens;
  int64_t prompt = 0, steps = 0, vocab = 0;
  std::vector<float> prefill, decode;
  static HfLogits read(const std::string& path);
};

// Runs the engine in T over the reference's tokens (its prompt, then at step s the token the
// reference chose at step s, so both see the same sequence) and compares each step's logits with
// `want`'s: the largest |ours - theirs| over a step's logits relative to the largest |theirs|
// there, within `bound`. Prints a line per step; returns whether every step was within it.
template <tessera::Element T>
bool check_against_hf(const char* name, const Config& c, const HostWeights& w, const HfLogits& want,
                      double bound);

// The same measure between two reference runs (transformers in bf16 against transformers in f32,
// both over the same tokens): the largest over the prefill and the decode steps.
double hf_relative_error(const HfLogits& got, const HfLogits& want);

}  // namespace qwen3

// A Qwen3-architecture decoder built only on Tessera's kernel library (Tessera::kernels): token
// embedding; per layer RMSNorm, Q/K/V projections, per-head QK-RMSNorm, RoPE (half-split),
// grouped-query attention with a KV cache, the output projection with its residual add, RMSNorm,
// the SwiGLU MLP; a final RMSNorm and the LM head. A batch of B sequences (set_batch), each with
// its own row of the KV caches [B, positions, kv_heads, head_dim] and its own position: each
// sequence's prompt is prefilled on its own, then a decode step runs one token of every sequence
// together (B rows through each kernel). Each new position's keys and values are appended to the
// cache in place. generate() runs greedy decode steps as replays of one captured graph
// (tessera::capture): the step keeps its tokens and positions on the device, so a replay needs
// nothing from the host.
//
// No trained Qwen3 checkpoint is available here, so the weights are random, generated from a
// seed (Weights::random), at whatever shapes the Config gives: the tiny one below for CI on the
// CPU backend, or Qwen3-0.6B's real shapes. Linear weights are stored [in, out] (the layout the
// GEMM reads); Hugging Face stores them [out, in].
#pragma once

#include <cstdint>
#include <vector>

#include <tessera/kernels.hpp>
#include <tessera/runtime/graph.hpp>

namespace qwen3 {

struct Config {
  int64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0;
  int64_t heads = 0, kv_heads = 0, head_dim = 0;
  int64_t max_positions = 0;
  double rope_theta = 1e6;
  float eps = 1e-6f;

  // Small enough to run in CI on the CPU backend in well under a second; nothing is a multiple of
  // the kernels' tiles.
  static Config tiny() { return {300, 64, 96, 2, 4, 2, 32, 64, 1e6, 1e-6f}; }
  // Qwen3-0.6B (tied embeddings, as that model).
  static Config qwen3_0_6b() { return {151936, 1024, 3072, 28, 16, 8, 128, 4096, 1e6, 1e-6f}; }
};

// The weights as host values (row-major, linear weights [in, out]), exactly as the device holds
// them in T (each value is a T rounded once): what a reference implementation reads.
struct HostLayer {
  std::vector<float> input_norm, q, k, v, q_norm, k_norm, o, post_norm, gate, up, down;
};
struct HostWeights {
  std::vector<float> embed;  // [vocab, hidden]; the LM head is its transpose (tied)
  std::vector<HostLayer> layers;
  std::vector<float> final_norm;
  // Uniform values, scaled per matrix so activations stay of order one, rounded to T.
  template <tessera::Element T>
  static HostWeights random(const Config& c, uint64_t seed);
};

template <tessera::Element T>
class Model {
 public:
  // Batch one; set_batch() changes it.
  Model(const Config& config, const HostWeights& weights,
        tessera::Device device = tessera::default_device());

  // B sequences decoded together from now on: new, empty caches [B, ...] (every sequence must be
  // prefilled again). A decode step's linear layers stream each weight row once per block through
  // kernels::linear (M = B rows); from `gemm_from` sequences on, the step's projections go through
  // the gemm (the prompt's path: each weight tile shared by all B rows) instead.
  void set_batch(int64_t batch, int64_t gemm_from = 16);
  int64_t batch() const { return batch_; }

  // Runs the prompt (positions 0 .. n-1) of sequence `seq` (of batch()) and returns its logits
  // [n, vocab]; starts that sequence anew. The other sequences keep their caches.
  tessera::Tensor<T, 2> prefill(const std::vector<int32_t>& tokens, int64_t seq = 0);
  // Runs one more token of every sequence (tokens[b] at sequence b's next position) in one step
  // and returns their logits [B, vocab]. Every sequence must have been prefilled.
  tessera::Tensor<T, 2> decode(const std::vector<int32_t>& tokens);
  // Batch one: decode({token}).
  tessera::Tensor<T, 2> decode(int32_t token);
  // `steps` greedy decode steps after `token` (the next token of the sequence, at position()):
  // the same tokens as repeating token = greedy(decode(token)), but each step is one replay of a
  // captured graph that takes its token and position from the step before on the device, and the
  // replays are queued back to back (the host reads the tokens once, at the end). Returns the
  // `steps` tokens chosen. The graph is captured at the first call after prefill() or decode()
  // (or when `token` is not the one the last call chose) and replayed after that; that call's
  // first step runs eagerly before the capture, so that kernels meeting a new batch size are
  // tuned (tuning cannot happen inside a capture: tessera/tune.hpp).
  std::vector<int32_t> generate(int32_t token, int64_t steps);
  // The same for B sequences: tokens[b] is sequence b's next token; returns each sequence's
  // `steps` tokens ([B][steps]).
  std::vector<std::vector<int32_t>> generate(const std::vector<int32_t>& tokens, int64_t steps);
  // The next token by greedy sampling over the last row of logits.
  static int32_t greedy(const tessera::Tensor<T, 2>& logits);
  // Greedy sampling over every row of logits [B, vocab].
  static std::vector<int32_t> greedy_rows(const tessera::Tensor<T, 2>& logits);
  // Sequence `seq`'s next position (its length so far).
  int64_t position(int64_t seq = 0) const { return positions_.at(static_cast<size_t>(seq)); }

 private:
  struct Layer {
    tessera::Tensor<T, 1> input_norm, q_norm, k_norm, post_norm;
    tessera::Tensor<T, 2> q, k, v, o, gate, up, down;  // [in, out]: the prompt's gemm
    // The same weights [out, in]: a decode step's linear layers (kernels::linear), which stream
    // each output's row of weights; q, k and v stacked into one [q + k + v outputs, hidden], one
    // launch whose output the step takes apart by views; gate and up rows interleaved [2
    // intermediate, hidden] (kernels::interleave_rows), one tile and one load a block for both.
    tessera::Tensor<T, 2> qkv_rows, o_rows, gate_up_rows, down_rows;
    tessera::Tensor<T, 4> k_cache, v_cache;  // [B, max_positions, kv_heads, head_dim]
  };
  // The layers over `tokens` at `positions`. A decode step (`lengths` given: one token of each
  // sequence, lengths[b] = positions[b] + 1) attends over the caches; a prompt (`target`
  // [sequence, first position]) is one sequence's tokens under causal attention, its keys and
  // values appended to that sequence's cache rows.
  tessera::Tensor<T, 2> layers(const tessera::Tensor<int32_t, 1>& tokens,
                               const tessera::Tensor<int32_t, 1>& positions,
                               const tessera::Tensor<int32_t, 1>* lengths,
                               const tessera::Tensor<int32_t, 1>* target);
  // Throws unless every sequence has been prefilled and `n` more positions fit its cache.
  void require_room(int64_t n) const;
  void require_batch(const char* fn, size_t n) const;

  Config c_;
  tessera::Device device_;
  tessera::Tensor<T, 2> embed_, lm_head_;  // [vocab, hidden], [hidden, vocab]
  tessera::Tensor<T, 1> final_norm_;
  std::vector<Layer> layers_;
  tessera::kernels::RopeTables rope_;
  int64_t batch_ = 1, gemm_from_ = 16;
  std::vector<int64_t> positions_;  // per sequence
  // generate()'s graph and the device state it steps: per sequence, the token to run, its
  // position, the context length after it, and every chosen token by position (B rows of
  // positions + 1, flat).
  tessera::Graph step_;
  tessera::Tensor<int32_t, 1> token_, at_, length_, chosen_;
  std::vector<int32_t> next_tokens_;  // the tokens step_'s next replay runs
};

// The same model in double precision on the host, from the same weights: the logits [n, vocab]
// of every position of `tokens` (recomputed from scratch, no cache).
std::vector<double> reference_logits(const Config& c, const HostWeights& w,
                                     const std::vector<int32_t>& tokens);

}  // namespace qwen3

// A Qwen3-architecture decoder built only on Tessera's kernel library (Tessera::kernels): token
// embedding; per layer RMSNorm, Q/K/V projections, per-head QK-RMSNorm, RoPE (half-split),
// grouped-query attention with a KV cache, the output projection with its residual add, RMSNorm,
// the SwiGLU MLP; a final RMSNorm and the LM head. Batch one: a prefill of a prompt, then one
// token per decode step. Each new position's keys and values are appended to the cache in place.
// generate() runs greedy decode steps as replays of one captured graph (tessera::capture): the
// step keeps its token and position on the device, so a replay needs nothing from the host.
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
  Model(const Config& config, const HostWeights& weights,
        tessera::Device device = tessera::default_device());

  // Runs the prompt (positions 0 .. n-1) and returns its logits [n, vocab]; starts a new sequence.
  tessera::Tensor<T, 2> prefill(const std::vector<int32_t>& tokens);
  // Runs one more token at the next position and returns its logits [1, vocab].
  tessera::Tensor<T, 2> decode(int32_t token);
  // `steps` greedy decode steps after `token` (the next token of the sequence, at position()):
  // the same tokens as repeating token = greedy(decode(token)), but each step is one replay of a
  // captured graph that takes its token and position from the step before on the device, and the
  // replays are queued back to back (the host reads the tokens once, at the end). Returns the
  // `steps` tokens chosen. The graph is captured at the first call after prefill() or decode()
  // (or when `token` is not the one the last call chose) and replayed after that.
  std::vector<int32_t> generate(int32_t token, int64_t steps);
  // The next token by greedy sampling over the last row of logits.
  static int32_t greedy(const tessera::Tensor<T, 2>& logits);
  int64_t position() const { return position_; }

 private:
  struct Layer {
    tessera::Tensor<T, 1> input_norm, q_norm, k_norm, post_norm;
    tessera::Tensor<T, 2> q, k, v, o, gate, up, down;  // [in, out]: the prompt's gemm
    // The same weights [out, in]: a decode step's linear layers (kernels::linear), which stream
    // each output's row of weights; q, k and v stacked into one [q + k + v outputs, hidden], one
    // launch whose output the step takes apart by views.
    tessera::Tensor<T, 2> qkv_rows, o_rows, gate_rows, up_rows, down_rows;
    tessera::Tensor<T, 4> k_cache, v_cache;  // [1, max_positions, kv_heads, head_dim]
  };
  // Runs `tokens` at positions position_ ... and returns their logits.
  tessera::Tensor<T, 2> forward(const std::vector<int32_t>& tokens);
  // The layers over `tokens` at `positions` (the first is start[0]); `lengths` (decode: one
  // token, the context length start + 1) selects decode attention over the cache, else the
  // prompt's causal attention.
  tessera::Tensor<T, 2> layers(const tessera::Tensor<int32_t, 1>& tokens,
                               const tessera::Tensor<int32_t, 1>& positions,
                               const tessera::Tensor<int32_t, 1>& start,
                               const tessera::Tensor<int32_t, 1>* lengths);
  // Throws unless `n` more positions fit the cache.
  void require_room(int64_t n) const;

  Config c_;
  tessera::Device device_;
  tessera::Tensor<T, 2> embed_, lm_head_;  // [vocab, hidden], [hidden, vocab]
  tessera::Tensor<T, 1> final_norm_;
  std::vector<Layer> layers_;
  tessera::kernels::RopeTables rope_;
  int64_t position_ = 0;
  // generate()'s graph and the device state it steps: the token to run, its position, the context
  // length after it, and every chosen token by position.
  tessera::Graph step_;
  tessera::Tensor<int32_t, 1> token_, at_, length_, chosen_;
  int32_t next_token_ = -1;  // the token step_'s next replay runs
};

// The same model in double precision on the host, from the same weights: the logits [n, vocab]
// of every position of `tokens` (recomputed from scratch, no cache).
std::vector<double> reference_logits(const Config& c, const HostWeights& w,
                                     const std::vector<int32_t>& tokens);

}  // namespace qwen3

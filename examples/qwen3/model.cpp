// The engine: each step of the decoder is one call into the kernel library.
#include "model.hpp"

#include <random>

namespace qwen3 {

using namespace tessera;
namespace tk = tessera::kernels;

namespace {

// n values uniform in [lo, hi), each rounded to T once (so the host copy is what the device holds).
template <Element T>
std::vector<float> uniform(std::mt19937_64& gen, int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& e : v) e = static_cast<float>(T(static_cast<float>(dist(gen))));
  return v;
}

// A linear layer's weight [in, out], scaled so that the output's variance is the input's.
template <Element T>
std::vector<float> linear(std::mt19937_64& gen, int64_t in, int64_t out) {
  const double a = std::sqrt(3.0 / static_cast<double>(in));
  return uniform<T>(gen, in * out, -a, a);
}

template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> upload(const std::vector<float>& v, const int64_t (&shape)[N],
                                      Device device) {
  std::vector<T> t(v.size());
  for (size_t i = 0; i < v.size(); ++i) t[i] = T(v[i]);
  return from_host<T, N>(t, shape, device);
}

// generate()'s device-side step: after a step's logits, the chosen token and the position it goes
// to ([choice, length]), then the state for the next step, with the choice kept by position.
TESSERA_KERNEL(next_step, tile::Out<int32_t, 1> next, tile::In<int32_t, 1> choice,
               tile::In<int32_t, 1> length) {
  next.store(tile::concat({tile::load(choice, {0}, {1}), tile::load(length, {0}, {1})}, 0));
};

TESSERA_KERNEL(commit_step, tile::Out<int32_t, 1> token, tile::Out<int32_t, 1> position,
               tile::Out<int32_t, 1> length, tile::Out<int32_t, 1> chosen,
               tile::In<int32_t, 1> next) {
  const tile::Tile<int32_t> choice = tile::load(next, {0}, {1});
  const tile::Tile<int32_t> at = tile::load(next, {1}, {1});
  const tile::Index where = at.reshape({});
  token.store(choice);
  position.store(at);
  length.store(at + 1);
  // In place: only the chosen token's position of `chosen` changes (a position past its end is
  // dropped; the host keeps every step within the cache).
  chosen.store_part(choice, {where});
};

// A linear weight [in, out] as [out, in] (nn.Linear's layout, what kernels::linear reads).
template <Element T>
Tensor<T, 2> upload_rows(const std::vector<float>& w, int64_t in, int64_t out, Device device) {
  std::vector<float> t(w.size());
  for (int64_t i = 0; i < in; ++i)
    for (int64_t o = 0; o < out; ++o) t[o * in + i] = w[i * out + o];
  return upload<T>(t, {out, in}, device);
}

// q, k and v [in, out] stacked as rows [q_out + 2 kv_out, in].
template <Element T>
Tensor<T, 2> upload_qkv(const HostLayer& L, int64_t in, int64_t q_out, int64_t kv_out,
                        Device device) {
  std::vector<float> t;
  t.reserve(static_cast<size_t>((q_out + 2 * kv_out) * in));
  const std::pair<const std::vector<float>*, int64_t> parts[] = {
      {&L.q, q_out}, {&L.k, kv_out}, {&L.v, kv_out}};
  for (const auto& [w, out] : parts)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < in; ++i) t.push_back((*w)[i * out + o]);
  return upload<T>(t, {q_out + 2 * kv_out, in}, device);
}

}  // namespace

template <Element T>
HostWeights HostWeights::random(const Config& c, uint64_t seed) {
  std::mt19937_64 gen(seed);
  HostWeights w;
  // Small next to the layers' outputs: with the LM head tied, a large embedding makes every step
  // predict the token it was given.
  w.embed = uniform<T>(gen, c.vocab * c.hidden, -0.2, 0.2);
  for (int64_t l = 0; l < c.layers; ++l) {
    HostLayer L;
    L.input_norm = uniform<T>(gen, c.hidden, 0.8, 1.2);
    L.q = linear<T>(gen, c.hidden, c.heads * c.head_dim);
    L.k = linear<T>(gen, c.hidden, c.kv_heads * c.head_dim);
    L.v = linear<T>(gen, c.hidden, c.kv_heads * c.head_dim);
    L.q_norm = uniform<T>(gen, c.head_dim, 0.8, 1.2);
    L.k_norm = uniform<T>(gen, c.head_dim, 0.8, 1.2);
    L.o = linear<T>(gen, c.heads * c.head_dim, c.hidden);
    L.post_norm = uniform<T>(gen, c.hidden, 0.8, 1.2);
    L.gate = linear<T>(gen, c.hidden, c.intermediate);
    L.up = linear<T>(gen, c.hidden, c.intermediate);
    L.down = linear<T>(gen, c.intermediate, c.hidden);
    w.layers.push_back(std::move(L));
  }
  w.final_norm = uniform<T>(gen, c.hidden, 0.8, 1.2);
  return w;
}

template <Element T>
Model<T>::Model(const Config& c, const HostWeights& w, Device device)
    : c_(c),
      device_(device),
      embed_(upload<T>(w.embed, {c.vocab, c.hidden}, device)),
      final_norm_(upload<T>(w.final_norm, {c.hidden}, device)),
      rope_(tk::rope_tables(c.max_positions, c.head_dim, c.rope_theta, device)) {
  // The tied LM head: the embedding transposed, [hidden, vocab].
  std::vector<float> head(w.embed.size());
  for (int64_t t = 0; t < c.vocab; ++t)
    for (int64_t i = 0; i < c.hidden; ++i) head[i * c.vocab + t] = w.embed[t * c.hidden + i];
  lm_head_ = upload<T>(head, {c.hidden, c.vocab}, device);
  const int64_t q_out = c.heads * c.head_dim, kv_out = c.kv_heads * c.head_dim;
  for (const HostLayer& L : w.layers) {
    const int64_t h = c.hidden, im = c.intermediate;
    layers_.push_back(
        {upload<T>(L.input_norm, {h}, device), upload<T>(L.q_norm, {c.head_dim}, device),
         upload<T>(L.k_norm, {c.head_dim}, device), upload<T>(L.post_norm, {h}, device),
         upload<T>(L.q, {h, q_out}, device), upload<T>(L.k, {h, kv_out}, device),
         upload<T>(L.v, {h, kv_out}, device), upload<T>(L.o, {q_out, h}, device),
         upload<T>(L.gate, {h, im}, device), upload<T>(L.up, {h, im}, device),
         upload<T>(L.down, {im, h}, device), upload_qkv<T>(L, h, q_out, kv_out, device),
         upload_rows<T>(L.o, q_out, h, device), upload_rows<T>(L.gate, h, im, device),
         upload_rows<T>(L.up, h, im, device), upload_rows<T>(L.down, im, h, device),
         zeros<T>({1, c.max_positions, c.kv_heads, c.head_dim}, device),
         zeros<T>({1, c.max_positions, c.kv_heads, c.head_dim}, device)});
  }
}

template <Element T>
Tensor<T, 2> Model<T>::prefill(const std::vector<int32_t>& tokens) {
  step_ = Graph();  // it holds the caches, which the prompt writes
  position_ = 0;
  return forward(tokens);
}

template <Element T>
Tensor<T, 2> Model<T>::decode(int32_t token) {
  step_ = Graph();
  return forward({token});
}

template <Element T>
void Model<T>::require_room(int64_t n) const {
  if (n <= 0 || position_ + n > c_.max_positions)
    throw UsageError("qwen3: " + std::to_string(n) + " tokens at position " +
                     std::to_string(position_) + " do not fit the cache of " +
                     std::to_string(c_.max_positions) + " positions");
}

template <Element T>
std::vector<int32_t> Model<T>::generate(int32_t token, int64_t steps) {
  if (steps == 0) return {};
  if (position_ == 0)
    throw UsageError("qwen3: generate() continues a sequence; run prefill() first");
  require_room(steps);
  if (step_.empty() || token != next_token_) {
    step_ = Graph();
    token_ = from_host(std::vector<int32_t>{token}, device_);
    at_ = from_host(std::vector<int32_t>{static_cast<int32_t>(position_)}, device_);
    length_ = from_host(std::vector<int32_t>{static_cast<int32_t>(position_ + 1)}, device_);
    chosen_ = zeros<int32_t>({c_.max_positions + 1}, device_);
    step_ = capture("qwen3 decode step", [&] {
      Tensor<int32_t, 1> next;
      {  // the launch's handles to its inputs go with this scope: commit_step writes length_
        auto [n, choice, length] =
            next_step(empty<int32_t>({2}, device_).partition({2}),
                      tk::argmax(layers(token_, at_, at_, &length_)), length_)
                .sync();
        next = std::move(n).unpartition();
      }
      auto [token, at, len, chosen, next1] =
          commit_step(std::move(token_).partition({1}), std::move(at_).partition({1}),
                      std::move(length_).partition({1}),
                      std::move(chosen_).partition({c_.max_positions + 1}), std::move(next))
              .sync();
      token_ = std::move(token).unpartition();
      at_ = std::move(at).unpartition();
      length_ = std::move(len).unpartition();
      chosen_ = std::move(chosen).unpartition();
    });
  }
  const int64_t first = position_ + 1;
  for (int64_t s = 0; s < steps; ++s) step_.replay();
  position_ += steps;
  const std::vector<int32_t> all = chosen_.to_vector();  // waits for the last replay
  std::vector<int32_t> out(all.begin() + first, all.begin() + first + steps);
  next_token_ = out.back();
  return out;
}

template <Element T>
int32_t Model<T>::greedy(const Tensor<T, 2>& logits) {
  return tk::argmax(logits).to_vector().back();
}

template <Element T>
Tensor<T, 2> Model<T>::forward(const std::vector<int32_t>& tokens) {
  const int64_t n = static_cast<int64_t>(tokens.size()), start = position_;
  if (n == 0 || start + n > c_.max_positions || (start > 0 && n != 1))
    throw UsageError("qwen3: " + std::to_string(n) + " tokens at position " +
                     std::to_string(start) + "; this engine runs a prompt from position 0, then " +
                     "one token a step, up to " + std::to_string(c_.max_positions) + " positions");
  std::vector<int32_t> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(start + i);
  const auto positions = from_host(pos, device_);
  const auto first = from_host(std::vector<int32_t>{static_cast<int32_t>(start)}, device_);
  const auto length = from_host(std::vector<int32_t>{static_cast<int32_t>(start + 1)}, device_);
  Tensor<T, 2> logits =
      layers(from_host(tokens, device_), positions, first, start == 0 ? nullptr : &length);
  position_ += n;
  return logits;
}

template <Element T>
Tensor<T, 2> Model<T>::layers(const Tensor<int32_t, 1>& tokens, const Tensor<int32_t, 1>& positions,
                              const Tensor<int32_t, 1>& start, const Tensor<int32_t, 1>* lengths) {
  // A decode step (one token) streams each weight once through kernels::linear ([out, in]
  // weights); a prompt's rows share each weight tile through the gemm ([in, out]).
  const bool step = lengths != nullptr;
  Tensor<T, 2> h = tk::embedding(embed_, tokens);  // [n, hidden]
  for (Layer& L : layers_) {
    Tensor<T, 3> q, k, v;
    if (step) {  // one launch for the input norm, q, k and v; one for the split, QK-norm, RoPE
      tk::SplitQKV<T> heads = tk::qkv_norm_rope(
          tk::linear_rms_norm(h, L.input_norm, c_.eps, L.qkv_rows), c_.heads, c_.kv_heads, L.q_norm,
          L.k_norm, c_.eps, positions, rope_, tk::RopeStyle::half_split);
      q = std::move(heads.q);
      k = std::move(heads.k);
      v = std::move(heads.v);
    } else {
      const Tensor<T, 2> x = tk::rms_norm(h, L.input_norm, c_.eps);
      tk::RotatedQK<T> qk = tk::rope_qk(
          tk::rms_norm(tk::split_heads(tk::gemm(x, L.q), c_.head_dim), L.q_norm, c_.eps),
          tk::rms_norm(tk::split_heads(tk::gemm(x, L.k), c_.head_dim), L.k_norm, c_.eps), positions,
          rope_, tk::RopeStyle::half_split);
      q = std::move(qk.q);
      k = std::move(qk.k);
      v = tk::split_heads(tk::gemm(x, L.v), c_.head_dim);
    }
    tk::kv_cache_append(L.k_cache, L.v_cache, k, v, start);
    // A step's attention writes its heads merged, the layout the o projection reads.
    const Tensor<T, 2> attn = step
                                  ? tk::decode_attention_merged(q, L.k_cache, L.v_cache, *lengths)
                                  : tk::merge_heads(tk::flash_attention(q, k, v, {.causal = true}));
    if (step) {  // o projection + residual; norm + gate/up; down + residual: three launches
      const Tensor<T, 2> sum = tk::linear(attn, L.o_rows, h);
      h = tk::linear(tk::linear_swiglu_rms_norm(sum, L.post_norm, c_.eps, L.gate_rows, L.up_rows),
                     L.down_rows, sum);
    } else {
      // h + attention output, and its norm, in one pass; then the MLP with its residual fused.
      const tk::NormedResidual<T, 2> post =
          tk::add_rms_norm(tk::gemm(attn, L.o), h, L.post_norm, c_.eps);
      tk::Epilogue<T> add_residual;
      add_residual.residual = post.sum;
      h = tk::gemm(tk::gemm_swiglu(post.normed, L.gate, L.up), L.down, add_residual);
    }
  }
  // The tied LM head: the embedding table [vocab, hidden] is already in linear()'s layout.
  return step ? tk::linear_rms_norm(h, final_norm_, c_.eps, embed_)
              : tk::gemm(tk::rms_norm(h, final_norm_, c_.eps), lm_head_);
}

template HostWeights HostWeights::random<float>(const Config&, uint64_t);
template HostWeights HostWeights::random<bfloat16>(const Config&, uint64_t);
template HostWeights HostWeights::random<half>(const Config&, uint64_t);
template class Model<float>;
template class Model<bfloat16>;
template class Model<half>;

}  // namespace qwen3

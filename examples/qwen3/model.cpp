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
  for (const HostLayer& L : w.layers)
    layers_.push_back(
        {upload<T>(L.input_norm, {c.hidden}, device), upload<T>(L.q_norm, {c.head_dim}, device),
         upload<T>(L.k_norm, {c.head_dim}, device), upload<T>(L.post_norm, {c.hidden}, device),
         upload<T>(L.q, {c.hidden, q_out}, device), upload<T>(L.k, {c.hidden, kv_out}, device),
         upload<T>(L.v, {c.hidden, kv_out}, device), upload<T>(L.o, {q_out, c.hidden}, device),
         upload<T>(L.gate, {c.hidden, c.intermediate}, device),
         upload<T>(L.up, {c.hidden, c.intermediate}, device),
         upload<T>(L.down, {c.intermediate, c.hidden}, device),
         zeros<T>({1, c.max_positions, c.kv_heads, c.head_dim}, device),
         zeros<T>({1, c.max_positions, c.kv_heads, c.head_dim}, device)});
}

template <Element T>
Tensor<T, 2> Model<T>::prefill(const std::vector<int32_t>& tokens) {
  position_ = 0;
  return forward(tokens);
}

template <Element T>
Tensor<T, 2> Model<T>::decode(int32_t token) {
  return forward({token});
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
  Tensor<T, 2> h = tk::embedding(embed_, from_host(tokens, device_));  // [n, hidden]
  for (Layer& L : layers_) {
    const Tensor<T, 2> x = tk::rms_norm(h, L.input_norm, c_.eps);
    const Tensor<T, 3> q =
        tk::rms_norm(tk::split_heads(tk::gemm(x, L.q), c_.head_dim), L.q_norm, c_.eps);
    const Tensor<T, 3> k =
        tk::rms_norm(tk::split_heads(tk::gemm(x, L.k), c_.head_dim), L.k_norm, c_.eps);
    const Tensor<T, 3> v = tk::split_heads(tk::gemm(x, L.v), c_.head_dim);
    const tk::RotatedQK<T> qk = tk::rope_qk(q, k, positions, rope_, tk::RopeStyle::half_split);
    L.k_cache = tk::kv_cache_write(L.k_cache, qk.k, start);
    L.v_cache = tk::kv_cache_write(L.v_cache, v, start);
    const Tensor<T, 3> attn =
        start == 0 ? tk::flash_attention(qk.q, qk.k, v, {.causal = true})
                   : tk::decode_attention(
                         qk.q, L.k_cache, L.v_cache,
                         from_host(std::vector<int32_t>{static_cast<int32_t>(start + 1)}, device_));
    // h + attention output, and its norm, in one pass; then the MLP with its residual add fused.
    const tk::NormedResidual<T, 2> post =
        tk::add_rms_norm(tk::gemm(tk::merge_heads(attn), L.o), h, L.post_norm, c_.eps);
    tk::Epilogue<T> add_residual;
    add_residual.residual = post.sum;
    h = tk::gemm(tk::gemm_swiglu(post.normed, L.gate, L.up), L.down, add_residual);
  }
  position_ += n;
  return tk::gemm(tk::rms_norm(h, final_norm_, c_.eps), lm_head_);
}

template HostWeights HostWeights::random<float>(const Config&, uint64_t);
template HostWeights HostWeights::random<bfloat16>(const Config&, uint64_t);
template HostWeights HostWeights::random<half>(const Config&, uint64_t);
template class Model<float>;
template class Model<bfloat16>;
template class Model<half>;

}  // namespace qwen3

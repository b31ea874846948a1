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

// generate()'s device-side step, one block per sequence b: after a step's logits, the chosen token
// and the position it goes to (next[2b], next[2b + 1]), then the state for the next step, with
// the choice kept by position in sequence b's row of `chosen` (flat [B * (positions + 1)]).
TESSERA_KERNEL(next_step, tile::Out<int32_t, 1> next, tile::In<int32_t, 1> choice,
               tile::In<int32_t, 1> length) {
  const tile::Index b = tile::tile_index(0);
  next.store(tile::concat({tile::load(choice, {b}, {1}), tile::load(length, {b}, {1})}, 0));
};

TESSERA_KERNEL(commit_step, tile::Out<int32_t, 1> token, tile::Out<int32_t, 1> position,
               tile::Out<int32_t, 1> length, tile::Out<int32_t, 1> chosen,
               tile::In<int32_t, 1> next) {
  const tile::Index b = tile::tile_index(0);
  const tile::Tile<int32_t> choice = tile::load_at(next, {b * 2}, {1});
  const tile::Tile<int32_t> at = tile::load_at(next, {b * 2 + 1}, {1});
  const tile::Index where = at.reshape({});
  token.store(choice);
  position.store(at);
  length.store(at + 1);
  // In place: only the chosen token's position of `chosen` changes (a position past its end is
  // dropped; the host keeps every step within the cache).
  chosen.store_part(choice, {where});
};

// Appends for a batch of sequences, which kernels::kv_cache_append takes only as [B, n, H, D]
// (no view gives a step's [B, H, D] keys that shape): the cache [B, S, H, D] is the output, cut
// into [1, kAppendChunk, H, D] chunks as the library's append does. store_rows stores positions
// [s, s + n) of this block's sequence that land in its chunk, row(p) giving position s + p's
// piece [1, 1, H, D]; the first at the top level (at the chunk's end, outside the tile, when none
// lands here), the rest in a loop.
template <Element T, class Row>
void store_rows(const tile::Out<T, 4>& cache, const tile::Index& s, const tile::Index& n,
                const Row& row) {
  const int32_t chunk = static_cast<int32_t>(cache.shape()[1]);
  const tile::Index first = tile::tile_index(1) * chunk;
  const tile::Index lo = tile::minimum(tile::maximum(s - first, 0), chunk);
  const tile::Index hi = tile::minimum(tile::maximum(s + n - first, 0), chunk);
  const tile::Index top = tile::select(lo < hi, lo, chunk);
  cache.store_part(row(first + top - s), {0, top, 0, 0});
  tile::for_range(lo + 1, hi, [&](tile::Index r) {
    cache.store_part(row(first + r - s), {0, r, 0, 0});
  });
}

// A decode step's keys and values, k and v [B, H, D]: sequence b's row at position at[b].
template <Element T>
TESSERA_KERNEL(append_step, tile::Out<T, 4> k_cache, tile::Out<T, 4> v_cache, tile::In<T, 3> k,
               tile::In<T, 3> v, tile::In<int32_t, 1> at) {
  const Shape& t = k_cache.shape();
  const tile::Index b = tile::tile_index(0);
  const tile::Index s = tile::load(at, {b}, {1}).reshape({});
  auto piece = [&](const tile::In<T, 3>& x) {
    return [&x, &b, &t](const tile::Index&) {
      return tile::load(x, {b, 0, 0}, {1, t[2], t[3]}).reshape({1, 1, t[2], t[3]});
    };
  };
  store_rows(k_cache, s, tile::Index::full({}, 1), piece(k));
  store_rows(v_cache, s, tile::Index::full({}, 1), piece(v));
};

// One sequence's prompt, k and v [n, H, D], into the cache rows of sequence target[0] from
// position target[1]; the other sequences' blocks store nothing.
template <Element T>
TESSERA_KERNEL(append_prompt, tile::Out<T, 4> k_cache, tile::Out<T, 4> v_cache, tile::In<T, 3> k,
               tile::In<T, 3> v, tile::In<int32_t, 1> target) {
  const Shape& t = k_cache.shape();
  const tile::Index seq = tile::load_element(target, {0}), s = tile::load_element(target, {1});
  // One traced value per statement: the IR must not depend on the compiler's argument order.
  const tile::Tile<bool> mine = tile::tile_index(0) == seq;
  const tile::Index rows = k.dim(0).template cast<int32_t>();
  const tile::Index n = tile::select(mine, rows, 0);
  auto piece = [&](const tile::In<T, 3>& x) {
    return [&x, &t](const tile::Index& p) {
      return tile::load(x, {p, 0, 0}, {1, t[2], t[3]}).reshape({1, 1, t[2], t[3]});
    };
  };
  store_rows(k_cache, s, n, piece(k));
  store_rows(v_cache, s, n, piece(v));
};

// Keys and values into the caches by one of the kernels above.
template <Element T, class Kernel, class Where>
void append(Tensor<T, 4>& k_cache, Tensor<T, 4>& v_cache, const Kernel& kernel,
            const Tensor<T, 3>& k, const Tensor<T, 3>& v, const Where& where) {
  const int64_t tile[] = {1, tk::kAppendChunk, k_cache.dim(2), k_cache.dim(3)};
  auto [k1, v1, ka, va, w1] =
      kernel(std::move(k_cache).partition(tile), std::move(v_cache).partition(tile), k, v, where)
          .sync();
  k_cache = std::move(k1).unpartition();
  v_cache = std::move(v1).unpartition();
}

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
    layers_.push_back({upload<T>(L.input_norm, {h}, device),
                       upload<T>(L.q_norm, {c.head_dim}, device),
                       upload<T>(L.k_norm, {c.head_dim}, device),
                       upload<T>(L.post_norm, {h}, device),
                       upload<T>(L.q, {h, q_out}, device),
                       upload<T>(L.k, {h, kv_out}, device),
                       upload<T>(L.v, {h, kv_out}, device),
                       upload<T>(L.o, {q_out, h}, device),
                       upload<T>(L.gate, {h, im}, device),
                       upload<T>(L.up, {h, im}, device),
                       upload<T>(L.down, {im, h}, device),
                       upload_qkv<T>(L, h, q_out, kv_out, device),
                       upload_rows<T>(L.o, q_out, h, device),
                       tk::interleave_rows(upload_rows<T>(L.gate, h, im, device),
                                           upload_rows<T>(L.up, h, im, device)),
                       upload_rows<T>(L.down, im, h, device),
                       {},
                       {}});
  }
  set_batch(1);
}

template <Element T>
void Model<T>::set_batch(int64_t batch, int64_t gemm_from) {
  if (batch < 1 || gemm_from < 1)
    throw UsageError("qwen3: set_batch(" + std::to_string(batch) + ", " +
                     std::to_string(gemm_from) + "): both must be at least 1");
  step_ = Graph();  // it holds the caches
  batch_ = batch;
  gemm_from_ = gemm_from;
  positions_.assign(static_cast<size_t>(batch), 0);
  next_tokens_.clear();
  for (Layer& L : layers_) {
    L.k_cache = Tensor<T, 4>();  // the old caches go before the new ones are allocated
    L.v_cache = Tensor<T, 4>();
    L.k_cache = zeros<T>({batch, c_.max_positions, c_.kv_heads, c_.head_dim}, device_);
    L.v_cache = zeros<T>({batch, c_.max_positions, c_.kv_heads, c_.head_dim}, device_);
  }
}

template <Element T>
Tensor<T, 2> Model<T>::prefill(const std::vector<int32_t>& tokens, int64_t seq) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (seq < 0 || seq >= batch_)
    throw UsageError("qwen3: prefill of sequence " + std::to_string(seq) + " in a batch of " +
                     std::to_string(batch_));
  if (n == 0 || n > c_.max_positions)
    throw UsageError("qwen3: a prompt of " + std::to_string(n) + " tokens; the cache holds 1 to " +
                     std::to_string(c_.max_positions) + " positions");
  step_ = Graph();  // it holds the caches, which the prompt writes
  std::vector<int32_t> pos(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(i);
  const auto target = from_host(std::vector<int32_t>{static_cast<int32_t>(seq), 0}, device_);
  Tensor<T, 2> logits =
      layers(from_host(tokens, device_), from_host(pos, device_), nullptr, &target);
  positions_[static_cast<size_t>(seq)] = n;
  return logits;
}

template <Element T>
void Model<T>::require_batch(const char* fn, size_t n) const {
  if (static_cast<int64_t>(n) != batch_)
    throw UsageError(std::string("qwen3: ") + fn + " got " + std::to_string(n) +
                     " tokens for a batch of " + std::to_string(batch_) +
                     " sequences (one token a sequence)");
}

template <Element T>
Tensor<T, 2> Model<T>::decode(const std::vector<int32_t>& tokens) {
  require_batch("decode()", tokens.size());
  require_room(1);
  step_ = Graph();
  std::vector<int32_t> pos, len;
  for (int64_t p : positions_) {
    pos.push_back(static_cast<int32_t>(p));
    len.push_back(static_cast<int32_t>(p + 1));
  }
  const auto lengths = from_host(len, device_);
  Tensor<T, 2> logits =
      layers(from_host(tokens, device_), from_host(pos, device_), &lengths, nullptr);
  for (int64_t& p : positions_) ++p;
  return logits;
}

template <Element T>
Tensor<T, 2> Model<T>::decode(int32_t token) {
  return decode(std::vector<int32_t>{token});
}

template <Element T>
void Model<T>::require_room(int64_t n) const {
  for (size_t b = 0; b < positions_.size(); ++b) {
    if (positions_[b] == 0)
      throw UsageError("qwen3: sequence " + std::to_string(b) +
                       " has no prompt; a decode step continues every sequence of the batch, so " +
                       "prefill() each first");
    if (n <= 0 || positions_[b] + n > c_.max_positions)
      throw UsageError("qwen3: " + std::to_string(n) + " tokens at position " +
                       std::to_string(positions_[b]) + " (sequence " + std::to_string(b) +
                       ") do not fit the cache of " + std::to_string(c_.max_positions) +
                       " positions");
  }
}

template <Element T>
std::vector<int32_t> Model<T>::generate(int32_t token, int64_t steps) {
  return generate(std::vector<int32_t>{token}, steps).at(0);
}

template <Element T>
std::vector<std::vector<int32_t>> Model<T>::generate(const std::vector<int32_t>& tokens,
                                                     int64_t steps) {
  require_batch("generate()", tokens.size());
  if (steps == 0) return std::vector<std::vector<int32_t>>(tokens.size());
  require_room(steps);
  const int64_t row = c_.max_positions + 1;  // a sequence's row of chosen_
  int64_t done = 0;                          // steps run eagerly
  if (step_.empty() || tokens != next_tokens_) {
    step_ = Graph();
    std::vector<int32_t> at, len;
    for (int64_t p : positions_) {
      at.push_back(static_cast<int32_t>(p));
      len.push_back(static_cast<int32_t>(p + 1));
    }
    token_ = from_host(tokens, device_);
    at_ = from_host(at, device_);
    length_ = from_host(len, device_);
    chosen_ = zeros<int32_t>({batch_ * row}, device_);
    const auto step = [&] {
      Tensor<int32_t, 1> next;
      {  // the launch's handles to its inputs go with this scope: commit_step writes length_
        auto [n, choice, length] =
            next_step(empty<int32_t>({2 * batch_}, device_).partition({2}),
                      tk::argmax(layers(token_, at_, &length_, nullptr)), length_)
                .sync();
        next = std::move(n).unpartition();
      }
      auto [token, pos, len, all, next1] =
          commit_step(std::move(token_).partition({1}), std::move(at_).partition({1}),
                      std::move(length_).partition({1}), std::move(chosen_).partition({row}),
                      std::move(next))
              .sync();
      token_ = std::move(token).unpartition();
      at_ = std::move(pos).unpartition();
      length_ = std::move(len).unpartition();
      chosen_ = std::move(all).unpartition();
    };
    // The first step eagerly: a kernel whose shapes are new here (the first step at this batch
    // size) is tuned now, which it could not be inside the capture. The graph steps from there.
    step();
    ++done;
    step_ = capture("qwen3 decode step", step);
  }
  for (int64_t s = done; s < steps; ++s) step_.replay();
  const std::vector<int32_t> all = chosen_.to_vector();  // waits for the last replay
  std::vector<std::vector<int32_t>> out;
  for (size_t b = 0; b < positions_.size(); ++b) {
    const auto first = all.begin() + static_cast<int64_t>(b) * row + positions_[b] + 1;
    out.emplace_back(first, first + steps);
    positions_[b] += steps;
  }
  next_tokens_.clear();
  for (const auto& o : out) next_tokens_.push_back(o.back());
  return out;
}

template <Element T>
int32_t Model<T>::greedy(const Tensor<T, 2>& logits) {
  return tk::argmax(logits).to_vector().back();
}

template <Element T>
std::vector<int32_t> Model<T>::greedy_rows(const Tensor<T, 2>& logits) {
  return tk::argmax(logits).to_vector();
}

template <Element T>
Tensor<T, 2> Model<T>::layers(const Tensor<int32_t, 1>& tokens, const Tensor<int32_t, 1>& positions,
                              const Tensor<int32_t, 1>* lengths, const Tensor<int32_t, 1>* target) {
  // A decode step of a few sequences streams each weight once through kernels::linear ([out,
  // in] weights); a prompt's rows, or a step of many sequences, share each weight tile through
  // the gemm ([in, out]).
  const bool step = lengths != nullptr;
  const bool rows = step && batch_ < gemm_from_;
  Tensor<T, 2> h = tk::embedding(embed_, tokens);  // [n, hidden]
  for (Layer& L : layers_) {
    Tensor<T, 2> attn;
    if (rows) {
      // One launch for the input norm, q, k and v; one for the split, QK-norm, RoPE and the
      // keys' and values' append to the caches; the attention's two.
      const Tensor<T, 4> q = tk::qkv_norm_rope_append(
          tk::linear_rms_norm(h, L.input_norm, c_.eps, L.qkv_rows), c_.heads, c_.kv_heads, L.q_norm,
          L.k_norm, c_.eps, positions, rope_, tk::RopeStyle::half_split, L.k_cache, L.v_cache);
      // The heads merged, the layout the o projection reads.
      attn = tk::decode_attention_merged(q, L.k_cache, L.v_cache, *lengths);
    } else {
      const Tensor<T, 2> x = tk::rms_norm(h, L.input_norm, c_.eps);
      tk::RotatedQK<T> qk = tk::rope_qk(
          tk::rms_norm(tk::split_heads(tk::gemm(x, L.q), c_.head_dim), L.q_norm, c_.eps),
          tk::rms_norm(tk::split_heads(tk::gemm(x, L.k), c_.head_dim), L.k_norm, c_.eps), positions,
          rope_, tk::RopeStyle::half_split);
      const Tensor<T, 3> v = tk::split_heads(tk::gemm(x, L.v), c_.head_dim);
      // A prompt into one sequence's rows; a step of many sequences (the gemm's).
      if (!step)
        append(L.k_cache, L.v_cache, append_prompt<T>, qk.k, v, *target);
      else
        append(L.k_cache, L.v_cache, append_step<T>, qk.k, v, positions);
      attn = step ? tk::decode_attention_merged(qk.q, L.k_cache, L.v_cache, *lengths)
                  : tk::merge_heads(tk::flash_attention(qk.q, qk.k, v, {.causal = true}));
    }
    if (rows) {  // o projection + residual; norm + gate/up; down + residual: three launches
      const Tensor<T, 2> sum = tk::linear(attn, L.o_rows, h);
      h = tk::linear(tk::linear_swiglu_rms_norm_paired(sum, L.post_norm, c_.eps, L.gate_up_rows),
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
  return rows ? tk::linear_rms_norm(h, final_norm_, c_.eps, embed_)
              : tk::gemm(tk::rms_norm(h, final_norm_, c_.eps), lm_head_);
}

template HostWeights HostWeights::random<float>(const Config&, uint64_t);
template HostWeights HostWeights::random<bfloat16>(const Config&, uint64_t);
template HostWeights HostWeights::random<half>(const Config&, uint64_t);
template class Model<float>;
template class Model<bfloat16>;
template class Model<half>;

}  // namespace qwen3

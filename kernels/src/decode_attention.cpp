// Decode attention: one query token per sequence against its KV cache, in two launches.
//
// 1. One tile block per (sequence, query head, chunk of kDecodeChunk cache positions) runs the
//    online softmax over its chunk's key tiles and stores its partial result: the unnormalized
//    output acc [D] and the pair (m, l), its max score and its sum of exp(score - m). A chunk past
//    the sequence's length runs no iteration and stores m = -inf, l = 0, acc = 0.
// 2. One block per (sequence, head) combines the chunks: out = sum_c e^(m_c - M) acc_c /
//    sum_c e^(m_c - M) l_c, with M the largest m_c (an empty chunk weighs e^-inf = 0).
//
// A single query row makes the scores a matrix-vector product, so they are elementwise products
// and sums rather than an mma.
#include <cmath>

#include "host.hpp"
#include "tessera/kernels/attention.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

constexpr int BN = 64;  // cache positions per inner tile
constexpr int kChunk = static_cast<int>(kDecodeChunk);
static_assert(kChunk % BN == 0, "a chunk is a whole number of key tiles");

// (m, l) as the [1, 1, 1, 2] tile stored for a chunk, and back.
Tile<float> pack(const Tile<float>& m, const Tile<float>& l) {
  const Tile<bool> first = iota<int32_t>({1, 1, 1, 2}, 3) == 0;
  return select(first, m.reshape({1, 1, 1, 1}), l.reshape({1, 1, 1, 1}));
}

template <Element T>
TESSERA_KERNEL(decode_attention_chunks, Out<float, 4> acc_out, Out<float, 4> ml_out, In<T, 3> q,
               In<T, 4> k_cache, In<T, 4> v_cache, In<int32_t, 1> lengths, Scalar<float> scale) {
  const int64_t dim = acc_out.shape()[3];
  const Index b = tile_index(0), h = tile_index(1), chunk = tile_index(2);
  const Index kv_head = h / (q.dim(1) / k_cache.dim(2)).template cast<int32_t>();
  const Index len = load(lengths, {b}, {1}, Pad::none()).reshape({});
  const Tile<float> qt = load(q, {b, h, 0}, {1, 1, dim}).template cast<float>().reshape({1, dim});
  const Index first_tile = chunk * (kChunk / BN);
  const Index end_tile = (minimum(len, (chunk + 1) * kChunk) + (BN - 1)) / BN;

  Tile<float> m = Tile<float>::full({1, 1}, -INFINITY);
  Tile<float> l = Tile<float>::zeros({1, 1});
  Tile<float> acc = Tile<float>::zeros({1, dim});
  for_range(first_tile, end_tile, [&](Index j) {
    const Tile<float> kt = load(k_cache, {b, j, kv_head, 0}, {1, BN, 1, dim})
                               .template cast<float>()
                               .reshape({BN, dim});
    const Tile<float> vt = load(v_cache, {b, j, kv_head, 0}, {1, BN, 1, dim})
                               .template cast<float>()
                               .reshape({BN, dim});
    const Index key = iota<int32_t>({BN, 1}, 0) + j * BN;
    const Tile<float> s = select(key < len, sum(kt * qt, 1) * scale, -INFINITY);  // [BN, 1]
    const Tile<float> m_new = maximum(m, max(s, 0));
    const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
    const Tile<float> alpha = exp(m - shift);
    const Tile<float> p = exp(s - shift);
    l = l * alpha + sum(p, 0);
    acc = acc * alpha + sum(p * vt, 0);
    m = m_new;
  });
  acc_out.store(acc.reshape({1, 1, 1, dim}));
  ml_out.store(pack(m, l));
};

template <Element T>
TESSERA_KERNEL(decode_attention_combine, Out<T, 3> o, In<float, 4> acc_in, In<float, 4> ml_in) {
  const int64_t dim = o.shape()[2];
  const Index b = tile_index(0), h = tile_index(1);
  const Index chunks = acc_in.dim(2).template cast<int32_t>();
  const Tile<bool> first = iota<int32_t>({1, 1, 1, 2}, 3) == 0;
  Tile<float> big_m = Tile<float>::full({}, -INFINITY);
  Tile<float> num = Tile<float>::zeros({1, 1, 1, dim});
  Tile<float> den = Tile<float>::zeros({});
  for_range(0, chunks, [&](Index c) {
    const Tile<float> ml = load(ml_in, {b, h, c, 0}, {1, 1, 1, 2});
    const Tile<float> m = sum(select(first, ml, 0.0f), 3).reshape({});
    const Tile<float> l = sum(select(!first, ml, 0.0f), 3).reshape({});
    const Tile<float> m_new = maximum(big_m, m);
    const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
    const Tile<float> alpha = exp(big_m - shift), weight = exp(m - shift);
    num = num * alpha + load(acc_in, {b, h, c, 0}, {1, 1, 1, dim}) * weight;
    den = den * alpha + l * weight;
    big_m = m_new;
  });
  o.store((num / den).template cast<T>().reshape({1, 1, dim}));
};

template <Element T>
void check_decode_args(const Tensor<T, 3>& q, const Tensor<T, 4>& k_cache,
                       const Tensor<T, 4>& v_cache, const Tensor<int32_t, 1>& lengths,
                       SourceLoc l) {
  const char* fn = "decode_attention";
  detail::require_rank_at_least(fn, "q", q.shape(), 3, l);
  detail::require_rank_at_least(fn, "k_cache", k_cache.shape(), 4, l);
  detail::require(k_cache.dim(0) == q.dim(0) && k_cache.dim(3) == q.dim(2), l,
                  std::string(fn) + ": 'q' is " + to_string(q.shape()) + " and 'k_cache' is " +
                      to_string(k_cache.shape()) +
                      "; q [B, Hq, D] needs a cache [B, S, Hkv, D] of the same B and D");
  detail::require_shape(fn, "v_cache", v_cache.shape(), k_cache.shape(), l);
  detail::require(q.dim(1) % k_cache.dim(2) == 0, l,
                  std::string(fn) + ": 'q' has " + std::to_string(q.dim(1)) +
                      " heads and 'k_cache' has " + std::to_string(k_cache.dim(2)) +
                      "; grouped-query attention needs the query heads to be a multiple of the "
                      "key/value heads");
  detail::require_shape(fn, "lengths", lengths.shape(), {q.dim(0)}, l);
  detail::require_same_device(fn, "k_cache", k_cache.device(), q.device(), l);
  detail::require_same_device(fn, "v_cache", v_cache.device(), q.device(), l);
  detail::require_same_device(fn, "lengths", lengths.device(), q.device(), l);
  // The lengths decide which cache positions are read; one outside [1, S] would read past the
  // sequence's cache (into the next one's) or leave nothing to attend to.
  const std::vector<int32_t> lens = lengths.to_vector();
  for (size_t b = 0; b < lens.size(); ++b)
    detail::require(lens[b] >= 1 && lens[b] <= k_cache.dim(1), l,
                    std::string(fn) + ": lengths[" + std::to_string(b) + "] is " +
                        std::to_string(lens[b]) + " but must be in [1, " +
                        std::to_string(k_cache.dim(1)) + "], the cache's positions");
}

}  // namespace

template <Element T>
Tensor<T, 3> decode_attention(const Tensor<T, 3>& q, const Tensor<T, 4>& k_cache,
                              const Tensor<T, 4>& v_cache, const Tensor<int32_t, 1>& lengths,
                              std::optional<float> scale, std::source_location l) {
  check_decode_args(q, k_cache, v_cache, lengths, l);
  const int64_t batch = q.dim(0), heads = q.dim(1), dim = q.dim(2);
  const int64_t chunks = ceil_div(k_cache.dim(1), kDecodeChunk);
  const float s = scale.value_or(static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))));
  auto acc = detail::new_tensor<float, 4>({batch, heads, chunks, dim}, q.device(), l)
                 .partition({1, 1, 1, dim});
  auto ml = detail::new_tensor<float, 4>({batch, heads, chunks, 2}, q.device(), l)
                .partition({1, 1, 1, 2});
  auto [acc1, ml1, q1, k1, v1, len1, s1] =
      decode_attention_chunks<T>(std::move(acc), std::move(ml), q, k_cache, v_cache, lengths, s)
          .sync();
  auto [o, acc2, ml2] =
      decode_attention_combine<T>(
          detail::new_tensor<T, 3>(q.shape(), q.device(), l).partition({1, 1, dim}),
          std::move(acc1).unpartition(), std::move(ml1).unpartition())
          .sync();
  return std::move(o).unpartition();
}

#define TESSERA_DECODE_ATTENTION(T)                                                      \
  template Tensor<T, 3> decode_attention(const Tensor<T, 3>&, const Tensor<T, 4>&,       \
                                         const Tensor<T, 4>&, const Tensor<int32_t, 1>&, \
                                         std::optional<float>, std::source_location);
TESSERA_DECODE_ATTENTION(float)
TESSERA_DECODE_ATTENTION(half)
TESSERA_DECODE_ATTENTION(bfloat16)

}  // namespace tessera::kernels

// Prefill attention, flash-attention forward: each tile block owns BM queries of one (batch,
// head) and walks the key tiles with a loop-carried online softmax (running max m, running sum l,
// unnormalized output acc), rescaling what it has when the max grows. A causal block stops at the
// last key tile its queries can see.
//
// On sm_90a the CUDA backend recognizes this loop (backend/cuda/attention_pipeline.hpp) and
// lowers it as FlashAttention-3 does: TMA copies of Q, K and V, wgmma for both products, the
// softmax in the accumulators' registers. Its tiles: 128 queries (two consumer warpgroups) by
// 128 keys for f16/bf16 with head dimensions up to 128; 64 by 64 otherwise (f32, which has no
// tensor-core path, and wider heads, whose accumulators would not fit the registers).
#include <cmath>
#include <type_traits>

#include "host.hpp"
#include "tessera/kernels/attention.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

// The [rows, D] tile of x ([B, L, H, D], or [L, H, D] for a batch of one) at batch b, row tile i
// (of `rows` positions) and head h.
template <Element T>
Tile<T> head_rows(const In<T>& x, const Index& b, const Index& i, const Index& h, int64_t rows,
                  int64_t dim) {
  if (x.rank() == 4) return load(x, {b, i, h, 0}, {1, rows, 1, dim}).reshape({rows, dim});
  return load(x, {i, h, 0}, {rows, 1, dim}).reshape({rows, dim});
}

// PositiveScale: the host saw scale > 0, so max(s * scale) = max(s) * scale exactly (rounding is
// monotonic) and the scale is applied inside exp's argument (one FFMA a score on the GPU) instead
// of to every score before the max.
template <Element T, bool Causal, int BM, int BN, bool PositiveScale>
TESSERA_KERNEL(flash_attention_fwd, Out<T> o, In<T> q, In<T> k, In<T> v, Scalar<float> scale) {
  // exp as ex2.approx on the GPU (docs/dsl.md "Numerics"): its error is far below the rounding of
  // the probabilities to T, and an exact expf would cost the multiprocessor's special-function
  // units several times over (BM * BN of them per key tile).
  numerics(Numerics::fast);
  const int r = o.rank();  // 4: [B, L, H, D]; 3: [L, H, D]
  const int64_t dim = o.shape()[r - 1];
  const Index b = r == 4 ? tile_index(0) : Index::zeros({});
  const Index i = tile_index(r - 3), h = tile_index(r - 2);
  const Index kv_head = h / (q.dim(r - 2) / k.dim(r - 2)).template cast<int32_t>();
  const Index q_len = q.dim(r - 3).template cast<int32_t>();
  const Index k_len = k.dim(r - 3).template cast<int32_t>();
  const Tile<T> qt = head_rows(q, b, i, h, BM, dim);
  // Each query row's position among the keys (causal masks are aligned to the end).
  const Index q_pos = iota<int32_t>({BM, 1}, 0) + i * BM + (k_len - q_len);
  Index k_end = k_len;
  if constexpr (Causal) k_end = minimum(k_len, (i + 1) * BM + (k_len - q_len));
  const Index k_tiles = (k_end + (BN - 1)) / BN;

  Tile<float> m = Tile<float>::full({BM, 1}, -INFINITY);
  Tile<float> l = Tile<float>::zeros({BM, 1});
  Tile<float> acc = Tile<float>::zeros({BM, dim});
  for_range(0, k_tiles, [&](Index j) {
    const Tile<T> kt = head_rows(k, b, j, kv_head, BN, dim);
    const Tile<T> vt = head_rows(v, b, j, kv_head, BN, dim);
    Tile<float> s = mma(qt, transpose(kt), Tile<float>::zeros({BM, BN}));
    if constexpr (!PositiveScale) s = s * scale;
    // The mask, only on the tiles that hold a hidden key: past the keys' end, or (causal) past the
    // diagonal of some query of this tile. The others, most of a long sequence, skip its compares
    // and selects.
    Tile<bool> masked = (j + 1) * BN > k_len;
    if constexpr (Causal) masked = masked | ((j + 1) * BN - 1 > i * BM + (k_len - q_len));
    if_(masked, [&] {
      const Index key = iota<int32_t>({1, BN}, 1) + j * BN;
      Tile<bool> visible = key < k_len;
      if constexpr (Causal) visible = visible & (key <= q_pos);
      s = select(visible, s, -INFINITY);
    });
    const Tile<float> m_new = PositiveScale ? maximum(m, max(s, 1) * scale) : maximum(m, max(s, 1));
    // A row that has seen no visible key yet keeps m = -inf; subtracting 0 instead keeps its
    // exp() at 0 rather than NaN.
    const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
    const Tile<float> alpha = exp(m - shift);
    const Tile<float> p = PositiveScale ? exp(s * scale - shift) : exp(s - shift);
    l = l * alpha + sum(p, 1);
    acc = acc * alpha + mma(p.template cast<T>(), vt, Tile<float>::zeros({BM, dim}));
    m = m_new;
  });
  o.store((acc / l).template cast<T>().reshape(o.shape()));
};

template <Element T, int R>
void check_attention_args(const Tensor<T, R>& q, const Tensor<T, R>& k, const Tensor<T, R>& v,
                          const AttentionOptions& options, SourceLoc l) {
  const char* fn = "flash_attention";
  detail::require_nonempty(fn, "q", q.shape(), R, l);
  detail::require_nonempty(fn, "k", k.shape(), R, l);
  detail::require((R == 3 || k.dim(0) == q.dim(0)) && k.dim(R - 1) == q.dim(R - 1), l,
                  std::string(fn) + ": 'q' is " + to_string(q.shape()) + " and 'k' is " +
                      to_string(k.shape()) +
                      "; they need the same batch and head dimension (the last axis)");
  detail::require_shape(fn, "v", v.shape(), k.shape(), l);
  detail::require(q.dim(R - 2) % k.dim(R - 2) == 0, l,
                  std::string(fn) + ": 'q' has " + std::to_string(q.dim(R - 2)) +
                      " heads and 'k' has " + std::to_string(k.dim(R - 2)) +
                      "; grouped-query attention needs the query heads to be a multiple of the "
                      "key/value heads");
  detail::require(!options.causal || q.dim(R - 3) <= k.dim(R - 3), l,
                  std::string(fn) + ": causal attention of " + std::to_string(q.dim(R - 3)) +
                      " queries against " + std::to_string(k.dim(R - 3)) +
                      " keys; the queries are the last of the keys' positions, so there can be "
                      "no more of them than keys");
  detail::require_same_device(fn, "k", k.device(), q.device(), l);
  detail::require_same_device(fn, "v", v.device(), q.device(), l);
}

}  // namespace

template <Element T, int R>
Tensor<T, R> flash_attention(const Tensor<T, R>& q, const Tensor<T, R>& k, const Tensor<T, R>& v,
                             const AttentionOptions& options, std::source_location l) {
  static_assert(R == 3 || R == 4, "flash_attention: q, k and v are [B, L, H, D] or [L, H, D]");
  check_attention_args(q, k, v, options, l);
  const int64_t dim = q.dim(R - 1);
  const float scale =
      options.scale.value_or(static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))));
  auto run = [&](auto kernel, int64_t bm) {
    Shape tile{bm, 1, dim};
    if (R == 4) tile.insert(tile.begin(), 1);
    auto o = detail::new_tensor<T, R>(q.shape(), q.device(), l).partition(tile);
    auto [o1, q1, k1, v1, s1] = kernel(std::move(o), q, k, v, scale).sync();
    return Tensor<T, R>(std::move(o1).unpartition());
  };
  const auto pick = [&](auto causal, auto wide, auto positive) {
    constexpr int b = decltype(wide)::value ? 128 : 64;
    return run(flash_attention_fwd<T, decltype(causal)::value, b, b, decltype(positive)::value>, b);
  };
  const auto pick_scale = [&](auto causal, auto wide) {
    return scale > 0 ? pick(causal, wide, std::true_type{}) : pick(causal, wide, std::false_type{});
  };
  const auto pick_causal = [&](auto wide) {
    return options.causal ? pick_scale(std::true_type{}, wide)
                          : pick_scale(std::false_type{}, wide);
  };
  if constexpr (!std::is_same_v<T, float>) {
    if (dim <= 128) return pick_causal(std::true_type{});
  }
  return pick_causal(std::false_type{});
}

#define TESSERA_FLASH_ATTENTION(T, R)                                                 \
  template Tensor<T, R> flash_attention(const Tensor<T, R>&, const Tensor<T, R>&,     \
                                        const Tensor<T, R>&, const AttentionOptions&, \
                                        std::source_location);
#define TESSERA_FLASH_ATTENTION_BOTH_RANKS(T) \
  TESSERA_FLASH_ATTENTION(T, 3) TESSERA_FLASH_ATTENTION(T, 4)
TESSERA_FLASH_ATTENTION_BOTH_RANKS(float)
TESSERA_FLASH_ATTENTION_BOTH_RANKS(half)
TESSERA_FLASH_ATTENTION_BOTH_RANKS(bfloat16)

}  // namespace tessera::kernels

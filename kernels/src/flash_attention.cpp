// Prefill attention, flash-attention forward: each tile block owns BM queries of one (batch,
// head) and walks the key tiles with a loop-carried online softmax (running max m, running sum l,
// unnormalized output acc), rescaling what it has when the max grows. A causal block stops at the
// last key tile its queries can see.
#include <cmath>

#include "host.hpp"
#include "tessera/kernels/attention.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

constexpr int BM = 64, BN = 64;

template <Element T, bool Causal>
TESSERA_KERNEL(flash_attention_fwd, Out<T, 4> o, In<T, 4> q, In<T, 4> k, In<T, 4> v,
               Scalar<float> scale) {
  const int64_t dim = o.shape()[3];
  const Index b = tile_index(0), i = tile_index(1), h = tile_index(2);
  const Index kv_head = h / (q.dim(2) / k.dim(2)).template cast<int32_t>();
  const Index q_len = q.dim(1).template cast<int32_t>();
  const Index k_len = k.dim(1).template cast<int32_t>();
  const Tile<T> qt = load(q, {b, i, h, 0}, {1, BM, 1, dim}).reshape({BM, dim});
  // Each query row's position among the keys (causal masks are aligned to the end).
  const Index q_pos = iota<int32_t>({BM, 1}, 0) + i * BM + (k_len - q_len);
  Index k_end = k_len;
  if constexpr (Causal) k_end = minimum(k_len, (i + 1) * BM + (k_len - q_len));
  const Index k_tiles = (k_end + (BN - 1)) / BN;

  Tile<float> m = Tile<float>::full({BM, 1}, -INFINITY);
  Tile<float> l = Tile<float>::zeros({BM, 1});
  Tile<float> acc = Tile<float>::zeros({BM, dim});
  for_range(0, k_tiles, [&](Index j) {
    const Tile<T> kt = load(k, {b, j, kv_head, 0}, {1, BN, 1, dim}).reshape({BN, dim});
    const Tile<T> vt = load(v, {b, j, kv_head, 0}, {1, BN, 1, dim}).reshape({BN, dim});
    const Index key = iota<int32_t>({1, BN}, 1) + j * BN;
    Tile<bool> visible = key < k_len;
    if constexpr (Causal) visible = visible & (key <= q_pos);
    const Tile<float> s =
        select(visible, mma(qt, transpose(kt), Tile<float>::zeros({BM, BN})) * scale, -INFINITY);
    const Tile<float> m_new = maximum(m, max(s, 1));
    // A row that has seen no visible key yet keeps m = -inf; subtracting 0 instead keeps its
    // exp() at 0 rather than NaN.
    const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
    const Tile<float> alpha = exp(m - shift);
    const Tile<float> p = exp(s - shift);
    l = l * alpha + sum(p, 1);
    acc = acc * alpha + mma(p.template cast<T>(), vt, Tile<float>::zeros({BM, dim}));
    m = m_new;
  });
  o.store((acc / l).template cast<T>().reshape({1, BM, 1, dim}));
};

template <Element T>
void check_attention_args(const Tensor<T, 4>& q, const Tensor<T, 4>& k, const Tensor<T, 4>& v,
                          const AttentionOptions& options, SourceLoc l) {
  const char* fn = "flash_attention";
  detail::require_rank_at_least(fn, "q", q.shape(), 4, l);
  detail::require_rank_at_least(fn, "k", k.shape(), 4, l);
  detail::require(k.dim(0) == q.dim(0) && k.dim(3) == q.dim(3), l,
                  std::string(fn) + ": 'q' is " + to_string(q.shape()) + " and 'k' is " +
                      to_string(k.shape()) +
                      "; they need the same batch (axis 0) and head dimension (axis 3)");
  detail::require_shape(fn, "v", v.shape(), k.shape(), l);
  detail::require(q.dim(2) % k.dim(2) == 0, l,
                  std::string(fn) + ": 'q' has " + std::to_string(q.dim(2)) +
                      " heads and 'k' has " + std::to_string(k.dim(2)) +
                      "; grouped-query attention needs the query heads to be a multiple of the "
                      "key/value heads");
  detail::require(!options.causal || q.dim(1) <= k.dim(1), l,
                  std::string(fn) + ": causal attention of " + std::to_string(q.dim(1)) +
                      " queries against " + std::to_string(k.dim(1)) +
                      " keys; the queries are the last of the keys' positions, so there can be "
                      "no more of them than keys");
  detail::require_same_device(fn, "k", k.device(), q.device(), l);
  detail::require_same_device(fn, "v", v.device(), q.device(), l);
}

}  // namespace

template <Element T>
Tensor<T, 4> flash_attention(const Tensor<T, 4>& q, const Tensor<T, 4>& k, const Tensor<T, 4>& v,
                             const AttentionOptions& options, std::source_location l) {
  check_attention_args(q, k, v, options, l);
  const int64_t dim = q.dim(3);
  const float scale =
      options.scale.value_or(static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))));
  auto o = detail::new_tensor<T, 4>(q.shape(), q.device(), l).partition({1, BM, 1, dim});
  auto run = [&](auto kernel) {
    auto [o1, q1, k1, v1, s1] = kernel(std::move(o), q, k, v, scale).sync();
    return std::move(o1).unpartition();
  };
  return options.causal ? run(flash_attention_fwd<T, true>) : run(flash_attention_fwd<T, false>);
}

#define TESSERA_FLASH_ATTENTION(T)                                                    \
  template Tensor<T, 4> flash_attention(const Tensor<T, 4>&, const Tensor<T, 4>&,     \
                                        const Tensor<T, 4>&, const AttentionOptions&, \
                                        std::source_location);
TESSERA_FLASH_ATTENTION(float)
TESSERA_FLASH_ATTENTION(half)
TESSERA_FLASH_ATTENTION(bfloat16)

}  // namespace tessera::kernels

// RoPE, one token per tile block: the block loads its token's position, uses it as the tile
// coordinate of its loads from the cos/sin tables, and rotates all heads of the token.
//
// A head [D] is rotated as two halves sliced out of it (half-split), or, interleaved, as the two
// columns of its [D/2, 2] view; the rotated halves are concatenated back.
#include <cmath>
#include <vector>

#include "host.hpp"
#include "tessera/kernels/rope.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

// The heads of one token, [H, D] in f32, rotated by the angles whose cos and sin are c and s.
template <bool Interleaved>
Tile<float> rotate(const Tile<float>& x, const Tile<float>& c, const Tile<float>& s) {
  const int64_t heads = x.shape()[0], dim = x.shape()[1], half = dim / 2;
  const Shape pairs = Interleaved ? Shape{heads, half, 2} : Shape{heads, 2, half};
  const Shape angles = Interleaved ? Shape{1, half, 1} : Shape{1, 1, half};
  const int axis = Interleaved ? 2 : 1;
  const Tile<float> v = x.reshape(pairs);
  const Tile<float> a = v.slice(axis, 0, 1), b = v.slice(axis, 1, 1);
  const Tile<float> cs = c.reshape(angles), sn = s.reshape(angles);
  return concat({a * cs - b * sn, b * cs + a * sn}, axis).reshape({heads, dim});
}

// Block t's token, rotated: x [T, H, D] -> the [1, H, D] tile of the output.
template <Element T, bool Interleaved>
Tile<T> rotated_token(const In<T, 3>& x, const Tile<float>& c, const Tile<float>& s,
                      const Shape& tile) {
  const Tile<float> v = load(x, {tile_index(0), 0, 0}, tile, Pad::none())
                            .template cast<float>()
                            .reshape({tile[1], tile[2]});
  return rotate<Interleaved>(v, c, s).reshape(tile).template cast<T>();
}

// The cos and sin rows of this block's token: [1, D/2].
struct Angles {
  Tile<float> c, s;
};
inline Angles token_angles(const In<int32_t, 1>& positions, const In<float, 2>& cos_table,
                           const In<float, 2>& sin_table, int64_t half) {
  const Index pos = load(positions, {tile_index(0)}, {1}, Pad::none()).reshape({});
  return {load(cos_table, {pos, 0}, {1, half}, Pad::none()),
          load(sin_table, {pos, 0}, {1, half}, Pad::none())};
}

template <Element T, bool Interleaved>
TESSERA_KERNEL(rope_tokens, Out<T, 3> y, In<T, 3> x, In<int32_t, 1> positions,
               In<float, 2> cos_table, In<float, 2> sin_table) {
  const Angles a = token_angles(positions, cos_table, sin_table, y.shape()[2] / 2);
  y.store(rotated_token<T, Interleaved>(x, a.c, a.s, y.shape()));
};

template <Element T, bool Interleaved>
TESSERA_KERNEL(rope_qk_tokens, Out<T, 3> qy, Out<T, 3> ky, In<T, 3> q, In<T, 3> k,
               In<int32_t, 1> positions, In<float, 2> cos_table, In<float, 2> sin_table) {
  const Angles a = token_angles(positions, cos_table, sin_table, qy.shape()[2] / 2);
  qy.store(rotated_token<T, Interleaved>(q, a.c, a.s, qy.shape()));
  ky.store(rotated_token<T, Interleaved>(k, a.c, a.s, ky.shape()));
};

// x * rsqrt(mean(x^2) + eps) * w over each head (row) of x [H, D], rounded to T.
template <Element T>
Tile<float> head_norm(const Tile<float>& x, const In<T, 1>& w, const Tile<float>& eps) {
  const int64_t dim = x.shape()[1];
  const Tile<float> weight = load(w, {0}, {dim}).template cast<float>().reshape({1, dim});
  return (x * rsqrt(sum(x * x, 1) * (1.0f / static_cast<float>(dim)) + eps) * weight)
      .template cast<T>()
      .template cast<float>();
}

// Query heads [g G, (g + 1) G) (G = Hq / Hkv) and key head g of token t's stacked row, each
// head RMS-normalized and rotated, in f32 ([G, D] and [1, D]). kv_first: the first key head's
// index in the row, in heads.
struct GroupHeads {
  Tile<float> q, k;
};
template <Element T, bool Interleaved>
GroupHeads norm_rope_group(const In<T, 2>& qkv, const In<T, 1>& q_norm, const In<T, 1>& k_norm,
                           const Tile<float>& eps, const Angles& a, const Index& t, const Index& g,
                           const Index& kv_first, int64_t group, int64_t dim) {
  const Tile<float> q =
      head_norm(load(qkv, {t, g}, {1, group * dim}).template cast<float>().reshape({group, dim}),
                q_norm, eps);
  const Tile<float> k = head_norm(
      load(qkv, {t, g + kv_first}, {1, dim}).template cast<float>().reshape({1, dim}), k_norm, eps);
  return {rotate<Interleaved>(q, a.c, a.s), rotate<Interleaved>(k, a.c, a.s)};
}

// One block per (token t, key/value head g): query heads [g G, (g + 1) G), key head g and value
// head g of the stacked row, so a decode step's token is Hkv blocks, not one block walking every
// head (13 us on the H200 by ncu, ~1 KB of spills; now ~170 B at G = 2, D = 128, bf16). v_first:
// the first value head's index in the row, in heads.
template <Element T, bool Interleaved>
TESSERA_KERNEL(qkv_norm_rope_groups, Out<T, 3> qy, Out<T, 3> ky, Out<T, 3> vy, In<T, 2> qkv,
               In<T, 1> q_norm, In<T, 1> k_norm, Scalar<float> eps, In<int32_t, 1> positions,
               In<float, 2> cos_table, In<float, 2> sin_table, Scalar<int32_t> kv_first,
               Scalar<int32_t> v_first) {
  const int64_t group = qy.shape()[1], dim = qy.shape()[2];
  const Angles a = token_angles(positions, cos_table, sin_table, dim / 2);
  const Index t = tile_index(0), g = tile_index(1);
  const GroupHeads h =
      norm_rope_group<T, Interleaved>(qkv, q_norm, k_norm, eps, a, t, g, kv_first, group, dim);
  qy.store(h.q.reshape({1, group, dim}).template cast<T>());
  ky.store(h.k.reshape({1, 1, dim}).template cast<T>());
  vy.store(load(qkv, {t, g + v_first}, {1, dim}).reshape({1, 1, dim}));
};

// A decode step with the cache append folded in: block (b, g) computes what qkv_norm_rope_groups
// computes for sequence b's token and key/value group g, stores the query heads as its [1, 1, G,
// D] tile of qy [B, 1, Hq, D], and stores key and value head g at position positions[b] of its
// tile of each cache. The caches [B, S, Hkv, D] are cut into [1, S, 1, D] tiles (all positions of
// one sequence's head g), so the grid is (B, 1, Hkv, 1), the query output's, and each block writes
// one position of its own tile with store_part (a position outside [0, S) falls outside the tile
// and is dropped; every other position keeps its value).
template <Element T, bool Interleaved>
TESSERA_KERNEL(qkv_norm_rope_append_step, Out<T, 4> qy, Out<T, 4> k_cache, Out<T, 4> v_cache,
               In<T, 2> qkv, In<T, 1> q_norm, In<T, 1> k_norm, Scalar<float> eps,
               In<int32_t, 1> positions, In<float, 2> cos_table, In<float, 2> sin_table,
               Scalar<int32_t> kv_first, Scalar<int32_t> v_first) {
  const int64_t group = qy.shape()[2], dim = qy.shape()[3];
  const Index b = tile_index(0), g = tile_index(2);
  // Unpadded, as token_angles' loads: b < B, the positions' extent (checked on the host).
  const Index pos = load(positions, {b}, {1}, Pad::none()).reshape({});
  const Angles a = {load(cos_table, {pos, 0}, {1, dim / 2}, Pad::none()),
                    load(sin_table, {pos, 0}, {1, dim / 2}, Pad::none())};
  const GroupHeads h =
      norm_rope_group<T, Interleaved>(qkv, q_norm, k_norm, eps, a, b, g, kv_first, group, dim);
  qy.store(h.q.reshape({1, 1, group, dim}).template cast<T>());
  k_cache.store_part(h.k.reshape({1, 1, 1, dim}).template cast<T>(), {0, pos, 0, 0});
  v_cache.store_part(load(qkv, {b, g + v_first}, {1, dim}).reshape({1, 1, 1, dim}), {0, pos, 0, 0});
};

template <Element T>
void check_rope_args(const char* fn, const char* arg, const Tensor<T, 3>& x,
                     const Tensor<int32_t, 1>& positions, const RopeTables& tables, SourceLoc l) {
  detail::require_nonempty(fn, arg, x.shape(), 3, l);
  const int64_t dim = x.dim(2);
  detail::require(dim % 2 == 0, l,
                  std::string(fn) + ": '" + arg + "' has head dimension " + std::to_string(dim) +
                      ", which is odd; RoPE rotates pairs, so the head dimension must be even");
  detail::require_shape(fn, "positions", positions.shape(), {x.dim(0)}, l);
  detail::require(tables.cos.rank() == 2 && tables.cos.dim(1) == dim / 2 &&
                      tables.sin.shape() == tables.cos.shape(),
                  l,
                  std::string(fn) + ": the tables are for head dimension " +
                      std::to_string(2 * tables.cos.dim(1)) + " but '" + arg +
                      "' has head dimension " + std::to_string(dim) +
                      "; make them with rope_tables(max_positions, " + std::to_string(dim) +
                      ", base)");
  detail::require_same_device(fn, "positions", positions.device(), x.device(), l);
  detail::require_same_device(fn, "tables", tables.cos.device(), x.device(), l);
}

template <Element T>
Partition<T, 3> new_tokens(const Tensor<T, 3>& x, SourceLoc l) {
  return detail::new_tensor<T, 3>(x.shape(), x.device(), l).partition({1, x.dim(1), x.dim(2)});
}

}  // namespace

RopeTables rope_tables(int64_t max_positions, int64_t head_dim, double base, Device device,
                       std::source_location l) {
  detail::require(max_positions > 0 && head_dim > 0 && head_dim % 2 == 0 && base > 0, l,
                  "rope_tables: max_positions " + std::to_string(max_positions) + ", head_dim " +
                      std::to_string(head_dim) + " and base must be positive, and head_dim even");
  const int64_t half = head_dim / 2;
  std::vector<float> c(static_cast<size_t>(max_positions * half)), s(c.size());
  for (int64_t p = 0; p < max_positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(p) *
          std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
      c[p * half + i] = static_cast<float>(std::cos(angle));
      s[p * half + i] = static_cast<float>(std::sin(angle));
    }
  return {from_host(c, {max_positions, half}, device, l),
          from_host(s, {max_positions, half}, device, l)};
}

template <Element T>
Tensor<T, 3> rope(const Tensor<T, 3>& x, const Tensor<int32_t, 1>& positions,
                  const RopeTables& tables, RopeStyle style, std::source_location l) {
  check_rope_args("rope", "x", x, positions, tables, l);
  auto run = [&](auto kernel) {
    auto [y, x1, p1, c1, s1] =
        kernel(new_tokens(x, l), x, positions, tables.cos, tables.sin).sync();
    return std::move(y).unpartition();
  };
  return style == RopeStyle::interleaved ? run(rope_tokens<T, true>) : run(rope_tokens<T, false>);
}

template <Element T>
RotatedQK<T> rope_qk(const Tensor<T, 3>& q, const Tensor<T, 3>& k,
                     const Tensor<int32_t, 1>& positions, const RopeTables& tables, RopeStyle style,
                     std::source_location l) {
  check_rope_args("rope_qk", "q", q, positions, tables, l);
  check_rope_args("rope_qk", "k", k, positions, tables, l);
  detail::require_same_device("rope_qk", "k", k.device(), q.device(), l);
  auto run = [&](auto kernel) {
    auto [qy, ky, q1, k1, p1, c1, s1] =
        kernel(new_tokens(q, l), new_tokens(k, l), q, k, positions, tables.cos, tables.sin).sync();
    return RotatedQK<T>{std::move(qy).unpartition(), std::move(ky).unpartition()};
  };
  return style == RopeStyle::interleaved ? run(rope_qk_tokens<T, true>)
                                         : run(rope_qk_tokens<T, false>);
}

namespace {

// Checks qkv_norm_rope's arguments; returns the head dimension (the norm weights').
template <Element T>
int64_t check_qkv_args(const char* fn, const Tensor<T, 2>& qkv, int64_t heads, int64_t kv_heads,
                       const Tensor<T, 1>& q_norm, const Tensor<T, 1>& k_norm,
                       const Tensor<int32_t, 1>& positions, const RopeTables& tables, SourceLoc l) {
  detail::require_nonempty(fn, "qkv", qkv.shape(), 2, l);
  detail::require_nonempty(fn, "q_norm", q_norm.shape(), 1, l);
  const int64_t dim = q_norm.dim(0);
  detail::require(
      heads > 0 && kv_heads > 0 && heads % kv_heads == 0 &&
          qkv.dim(1) == (heads + 2 * kv_heads) * dim,
      l,
      std::string(fn) + ": 'qkv' is " + to_string(qkv.shape()) + " but " + std::to_string(heads) +
          " query and " + std::to_string(kv_heads) + " key/value heads of " + std::to_string(dim) +
          " (the norm weights') need rows of " + std::to_string((heads + 2 * kv_heads) * dim) +
          ", with the query heads a multiple of the key/value heads");
  detail::require_shape(fn, "k_norm", k_norm.shape(), q_norm.shape(), l);
  detail::require(dim % 2 == 0 && tables.cos.rank() == 2 && tables.cos.dim(1) == dim / 2 &&
                      tables.sin.shape() == tables.cos.shape(),
                  l,
                  std::string(fn) + ": the tables are for head dimension " +
                      std::to_string(2 * tables.cos.dim(1)) + " but the heads have " +
                      std::to_string(dim) + " (an even number is needed); make them with " +
                      "rope_tables(max_positions, " + std::to_string(dim) + ", base)");
  detail::require_shape(fn, "positions", positions.shape(), {qkv.dim(0)}, l);
  detail::require_same_device(fn, "positions", positions.device(), qkv.device(), l);
  detail::require_same_device(fn, "tables", tables.cos.device(), qkv.device(), l);
  detail::require_same_device(fn, "q_norm", q_norm.device(), qkv.device(), l);
  detail::require_same_device(fn, "k_norm", k_norm.device(), qkv.device(), l);
  return dim;
}

}  // namespace

template <Element T>
SplitQKV<T> qkv_norm_rope(const Tensor<T, 2>& qkv, int64_t heads, int64_t kv_heads,
                          const Tensor<T, 1>& q_norm, const Tensor<T, 1>& k_norm, float eps,
                          const Tensor<int32_t, 1>& positions, const RopeTables& tables,
                          RopeStyle style, std::source_location l) {
  const int64_t dim =
      check_qkv_args("qkv_norm_rope", qkv, heads, kv_heads, q_norm, k_norm, positions, tables, l);
  // Each output in tiles of one key/value group: [1, Hq / Hkv, D] of q, [1, 1, D] of k and v.
  auto out = [&](int64_t h, int64_t per_group) {
    return detail::new_tensor<T, 3>({qkv.dim(0), h, dim}, qkv.device(), l)
        .partition({1, per_group, dim});
  };
  const auto kv_first = static_cast<int32_t>(heads),
             v_first = static_cast<int32_t>(heads + kv_heads);
  auto run = [&](auto kernel) {
    auto [qy, ky, vy, x1, qn, kn, e1, p1, c1, s1, f1, f2] =
        kernel(out(heads, heads / kv_heads), out(kv_heads, 1), out(kv_heads, 1), qkv, q_norm,
               k_norm, eps, positions, tables.cos, tables.sin, kv_first, v_first)
            .sync();
    return SplitQKV<T>{std::move(qy).unpartition(), std::move(ky).unpartition(),
                       std::move(vy).unpartition()};
  };
  return style == RopeStyle::interleaved ? run(qkv_norm_rope_groups<T, true>)
                                         : run(qkv_norm_rope_groups<T, false>);
}

template <Element T>
Tensor<T, 4> qkv_norm_rope_append(const Tensor<T, 2>& qkv, int64_t heads, int64_t kv_heads,
                                  const Tensor<T, 1>& q_norm, const Tensor<T, 1>& k_norm, float eps,
                                  const Tensor<int32_t, 1>& positions, const RopeTables& tables,
                                  RopeStyle style, Tensor<T, 4>& k_cache, Tensor<T, 4>& v_cache,
                                  std::source_location l) {
  const char* fn = "qkv_norm_rope_append";
  const int64_t dim =
      check_qkv_args(fn, qkv, heads, kv_heads, q_norm, k_norm, positions, tables, l);
  const int64_t batch = qkv.dim(0);
  detail::require_nonempty(fn, "k_cache", k_cache.shape(), 4, l);
  detail::require(k_cache.dim(0) == batch && k_cache.dim(2) == kv_heads && k_cache.dim(3) == dim, l,
                  std::string(fn) + ": 'k_cache' is " + to_string(k_cache.shape()) + " but 'qkv' " +
                      to_string(qkv.shape()) + " is a step of " + std::to_string(batch) +
                      " sequences (one token each) with " + std::to_string(kv_heads) +
                      " key/value heads of " + std::to_string(dim) + ": the cache must be [" +
                      std::to_string(batch) + ", positions, " + std::to_string(kv_heads) + ", " +
                      std::to_string(dim) + "]");
  detail::require_shape(fn, "v_cache", v_cache.shape(), k_cache.shape(), l);
  detail::require_same_device(fn, "k_cache", k_cache.device(), qkv.device(), l);
  detail::require_same_device(fn, "v_cache", v_cache.device(), qkv.device(), l);
  // All positions of one sequence's key/value head a tile: the grid (B, 1, Hkv, 1) is the query
  // output's, and each block's position lies in its own tile, wherever the sequence stands.
  const Shape tile{1, k_cache.dim(1), 1, dim};
  auto [k_part, v_part] = detail::partition_kv(k_cache, v_cache, tile, l);
  auto q = detail::new_tensor<T, 4>({batch, 1, heads, dim}, qkv.device(), l)
               .partition({1, 1, heads / kv_heads, dim});
  const auto kv_first = static_cast<int32_t>(heads),
             v_first = static_cast<int32_t>(heads + kv_heads);
  auto run = [&](auto kernel) {
    auto [qy, k_out, v_out, x1, qn, kn, e1, p1, c1, s1, f1, f2] =
        kernel(std::move(q), std::move(k_part), std::move(v_part), qkv, q_norm, k_norm, eps,
               positions, tables.cos, tables.sin, kv_first, v_first)
            .sync();
    k_cache = std::move(k_out).unpartition();
    v_cache = std::move(v_out).unpartition();
    return std::move(qy).unpartition();
  };
  return style == RopeStyle::interleaved ? run(qkv_norm_rope_append_step<T, true>)
                                         : run(qkv_norm_rope_append_step<T, false>);
}

#define TESSERA_ROPE(T)                                                                          \
  template Tensor<T, 3> rope(const Tensor<T, 3>&, const Tensor<int32_t, 1>&, const RopeTables&,  \
                             RopeStyle, std::source_location);                                   \
  template RotatedQK<T> rope_qk(const Tensor<T, 3>&, const Tensor<T, 3>&,                        \
                                const Tensor<int32_t, 1>&, const RopeTables&, RopeStyle,         \
                                std::source_location);                                           \
  template SplitQKV<T> qkv_norm_rope(const Tensor<T, 2>&, int64_t, int64_t, const Tensor<T, 1>&, \
                                     const Tensor<T, 1>&, float, const Tensor<int32_t, 1>&,      \
                                     const RopeTables&, RopeStyle, std::source_location);        \
  template Tensor<T, 4> qkv_norm_rope_append(                                                    \
      const Tensor<T, 2>&, int64_t, int64_t, const Tensor<T, 1>&, const Tensor<T, 1>&, float,    \
      const Tensor<int32_t, 1>&, const RopeTables&, RopeStyle, Tensor<T, 4>&, Tensor<T, 4>&,     \
      std::source_location);
TESSERA_ROPE(float)
TESSERA_ROPE(half)
TESSERA_ROPE(bfloat16)

}  // namespace tessera::kernels

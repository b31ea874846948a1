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

#define TESSERA_ROPE(T)                                                                         \
  template Tensor<T, 3> rope(const Tensor<T, 3>&, const Tensor<int32_t, 1>&, const RopeTables&, \
                             RopeStyle, std::source_location);                                  \
  template RotatedQK<T> rope_qk(const Tensor<T, 3>&, const Tensor<T, 3>&,                       \
                                const Tensor<int32_t, 1>&, const RopeTables&, RopeStyle,        \
                                std::source_location);
TESSERA_ROPE(float)
TESSERA_ROPE(half)
TESSERA_ROPE(bfloat16)

}  // namespace tessera::kernels

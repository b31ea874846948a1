// Tiles made from nothing (Tile<T>::full, ::zeros, ::iota and iota<T>) and tiles reshaped:
// broadcast (of a row, a column, a vector and a Scalar<T>), reshape (2-D tiles flattened, a 1-D
// tile folded into 3-D), transpose and permute. Each stores into a ragged output.
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element T>
constexpr double kFill = is_float_v<T> ? 2.5 : -3;

template <Element T>
TESSERA_KERNEL(fill_full, Out<T> z) {
  z.store(Tile<T>::full(z.shape(), T(kFill<T>)));
};
template <Element T>
TESSERA_KERNEL(fill_zeros, Out<T> z) {
  z.store(Tile<T>::zeros(z.shape()));
};
// Each element: its global index along Axis.
template <Element T, int Axis>
TESSERA_KERNEL(global_iota, Out<T> z) {
  const Index origin = tile_index(Axis) * static_cast<int32_t>(z.shape()[Axis]);
  z.store(Tile<T>::iota(z.shape(), Axis) + origin.template cast<T>());
};
template <Element T>
TESSERA_KERNEL(global_iota_1d, Out<T> z) {
  const Index origin = tile_index(0) * static_cast<int32_t>(z.shape()[0]);
  z.store(iota<T>(z.shape()) + origin.template cast<T>());
};

template <Element T>
TESSERA_KERNEL(broadcast_row, Out<T> z, In<T> row) {
  z.store(broadcast(load(row, {0, tile_index(1)}, {1, z.shape()[1]}), z.shape()));
};
template <Element T>
TESSERA_KERNEL(broadcast_column, Out<T> z, In<T> col) {
  z.store(load(col, {tile_index(0), 0}, {z.shape()[0], 1}).broadcast_to(z.shape()));
};
template <Element T>
TESSERA_KERNEL(broadcast_vector, Out<T> z, In<T> vec) {
  z.store(broadcast(load(vec, {tile_index(1)}, {z.shape()[1]}), z.shape()));
};
template <Element T>
TESSERA_KERNEL(broadcast_scalar, Out<T> z, Scalar<T> s) {
  z.store(broadcast(s, z.shape()));
};

// Block t of a 1-D output holds x's 2-D tile number t (row-major over x's tile grid), flattened.
template <Element T, int TM, int TN>
TESSERA_KERNEL(flatten_tiles, Out<T> z, In<T> x) {
  const Index t = tile_index(0);
  const Index cols = ((x.dim(1) + (TN - 1)) / TN).template cast<int32_t>();
  const Index i = t / cols;
  z.store(load(x, {i, t - i * cols}, {TM, TN}).reshape({TM * TN}));
};
// Block t of a 3-D output [*, B, C] holds the 1-D tile t of x, folded.
template <Element T, int A, int B, int C>
TESSERA_KERNEL(fold_tiles, Out<T> z, In<T> x) {
  z.store(load(x, {tile_index(0)}, {A * B * C}).reshape({A, B, C}));
};

template <Element T>
TESSERA_KERNEL(transpose_tiles, Out<T> z, In<T> x) {
  const Shape t = z.shape();
  z.store(transpose(load(x, {tile_index(1), tile_index(0)}, {t[1], t[0]})));
};
// z[c, a, b] = x[a, b, c].
template <Element T>
TESSERA_KERNEL(permute_tiles, Out<T> z, In<T> x) {
  const Shape t = z.shape();
  z.store(load(x, {tile_index(1), tile_index(2), tile_index(0)}, {t[1], t[2], t[0]})
              .permute({2, 0, 1}));
};

template <Element T>
using G = Guarded<T>;
template <Element T>
constexpr auto kIn = G<T>::Fill::Input;
template <Element T>
constexpr auto kOut = G<T>::Fill::Output;

template <Element T>
std::vector<Case> rows_for() {
  const std::string t = "_" + dtype_tag<T>();
  std::vector<Case> rows;
  rows.push_back({"full" + t, [](Rng& rng) {
                    G<T> z({rng.ragged(8, 3), rng.ragged(16, 3)}, kOut<T>);
                    (void)fill_full<T>(z.view().partition({8, 16})).sync();
                    expect_matches(
                        z, [](const Shape&) { return kFill<T>; }, 0);
                  }});
  rows.push_back({"zeros" + t, [](Rng& rng) {
                    G<T> z({rng.ragged(8, 3), rng.ragged(16, 3)}, kOut<T>);
                    (void)fill_zeros<T>(z.view().partition({8, 16})).sync();
                    expect_matches(
                        z, [](const Shape&) { return 0.0; }, 0);
                  }});
  rows.push_back({"iota_axis0" + t, [](Rng& rng) {
                    G<T> z({rng.ragged(8, 4), rng.ragged(16, 2)}, kOut<T>);
                    (void)global_iota<T, 0>(z.view().partition({8, 16})).sync();
                    expect_matches(
                        z, [](const Shape& i) { return double(i[0]); }, 0);
                  }});
  rows.push_back({"iota_axis1" + t, [](Rng& rng) {
                    G<T> z({rng.ragged(8, 3), rng.ragged(16, 2)}, kOut<T>);
                    (void)global_iota<T, 1>(z.view().partition({8, 16})).sync();
                    expect_matches(
                        z, [](const Shape& i) { return double(i[1]); }, 0);
                  }});
  rows.push_back({"iota_1d_last_axis" + t, [](Rng& rng) {
                    G<T> z({rng.ragged(32, 4)}, kOut<T>);  // < 256: exact in bf16
                    (void)global_iota_1d<T>(z.view().partition({32})).sync();
                    expect_matches(
                        z, [](const Shape& i) { return double(i[0]); }, 0);
                  }});
  rows.push_back({"broadcast_row" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(8, 3), rng.ragged(16, 3)};
                    G<T> row({1, s[1]}, kIn<T>), z(s, kOut<T>);
                    row.fill_uniform(rng, -50, 50);
                    (void)broadcast_row<T>(z.view().partition({8, 16}), row.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          return row.at({0, i[1]});
                        },
                        0);
                  }});
  rows.push_back({"broadcast_column" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(8, 3), rng.ragged(16, 3)};
                    G<T> col({s[0], 1}, kIn<T>), z(s, kOut<T>);
                    col.fill_uniform(rng, -50, 50);
                    (void)broadcast_column<T>(z.view().partition({8, 16}), col.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          return col.at({i[0], 0});
                        },
                        0);
                  }});
  rows.push_back({"broadcast_vector_adds_leading_axis" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(8, 3), rng.ragged(16, 3)};
                    G<T> vec({s[1]}, kIn<T>), z(s, kOut<T>);
                    vec.fill_uniform(rng, -50, 50);
                    (void)broadcast_vector<T>(z.view().partition({8, 16}), vec.view()).sync();
                    expect_matches(
                        z, [&](const Shape& i) { return vec.at({i[1]}); }, 0);
                  }});
  rows.push_back({"broadcast_scalar_param" + t, [](Rng& rng) {
                    G<T> z({rng.ragged(8, 3), rng.ragged(16, 3)}, kOut<T>);
                    const T s = from_double<T>(rng.integer(-50, 50));
                    (void)broadcast_scalar<T>(z.view().partition({8, 16}), s).sync();
                    expect_matches(
                        z, [&](const Shape&) { return to_double(s); }, 0);
                  }});
  rows.push_back({"reshape_2d_tiles_to_1d" + t, [](Rng& rng) {
                    constexpr int TM = 4, TN = 8;
                    const Shape s{rng.ragged(TM, 3), rng.ragged(TN, 3)};
                    const int64_t cols = ceil_div(s[1], TN);
                    const int64_t n = ceil_div(s[0], TM) * cols * TM * TN - rng.integer(0, 20);
                    G<T> x(s, kIn<T>), z({n}, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)flatten_tiles<T, TM, TN>(z.view().partition({TM * TN}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& f) {
                          const int64_t t = f[0] / (TM * TN), in = f[0] % (TM * TN);
                          const int64_t r = t / cols * TM + in / TN, c = t % cols * TN + in % TN;
                          return r < s[0] && c < s[1] ? x.at({r, c}) : 0.0;
                        },
                        0);
                  }});
  rows.push_back({"reshape_1d_tile_to_3d" + t, [](Rng& rng) {
                    constexpr int A = 2, B = 3, C = 4;
                    const int64_t n = rng.ragged(A * B * C, 4);
                    G<T> x({n}, kIn<T>), z({ceil_div(n, A * B * C) * A - 1, B, C}, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)fold_tiles<T, A, B, C>(z.view().partition({A, B, C}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          const int64_t f = (i[0] * B + i[1]) * C + i[2];
                          return f < n ? x.at({f}) : 0.0;
                        },
                        0);
                  }});
  rows.push_back({"transpose_2d" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(16, 3), rng.ragged(8, 3)};
                    G<T> x(s, kIn<T>), z({s[1], s[0]}, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)transpose_tiles<T>(z.view().partition({8, 16}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          return x.at({i[1], i[0]});
                        },
                        0);
                  }});
  rows.push_back({"permute_3d" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(2, 3), rng.ragged(4, 3), rng.ragged(8, 2)};
                    G<T> x(s, kIn<T>), z({s[2], s[0], s[1]}, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)permute_tiles<T>(z.view().partition({8, 2, 4}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          return x.at({i[1], i[2], i[0]});
                        },
                        0);
                  }});
  return rows;
}

std::vector<Case> shape_rows() {
  std::vector<Case> rows;
  for (auto&& part :
       {rows_for<float>(), rows_for<half>(), rows_for<bfloat16>(), rows_for<int32_t>()})
    rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}

TESSERA_OP_CASES(Shape, shape_rows());

}  // namespace
}  // namespace tessera::test

// slice and concat within a tile: a loaded tile's two halves swapped (RoPE's half split), a
// window of rows at an odd start, three tiles of different lengths (one a constant) joined, the
// pairs of a 3-D view swapped (interleaved RoPE), and a slice of a constant tile. Each stores
// into a ragged output and is compared with the elements it must have picked.
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element T>
constexpr double kConst = is_float_v<T> ? 2.5 : -3;

// z's tile = x's tile with its column halves swapped.
template <Element T>
TESSERA_KERNEL(swap_halves, Out<T> z, In<T> x) {
  const Tile<T> v = load_like(x, z);
  const int64_t half = z.shape()[1] / 2;
  z.store(concat({v.slice(1, half, half), v.slice(-1, 0, half)}, 1));
};

// Block i's tile [4, N] = rows [8 i + 3, 8 i + 7) of x.
template <Element T>
TESSERA_KERNEL(row_window, Out<T> z, In<T> x) {
  const int64_t n = z.shape()[1];
  z.store(load(x, {tile_index(0), tile_index(1)}, {8, n}).slice(0, 3, 4));
};

// Block i's tile [6, N]: two rows of x, three rows of a constant, one row of y.
template <Element T>
TESSERA_KERNEL(join_three, Out<T> z, In<T> x, In<T> y) {
  const int64_t n = z.shape()[1];
  const Tile<T> a = load(x, {tile_index(0), tile_index(1)}, {2, n});
  const Tile<T> b = Tile<T>::full({3, n}, T(kConst<T>));
  const Tile<T> c = load(y, {tile_index(0), tile_index(1)}, {1, n});
  z.store(concat({a, b, c}, 0));
};

// z's tile = x's tile with each adjacent pair of columns swapped, through a [M, N/2, 2] view.
template <Element T>
TESSERA_KERNEL(swap_pairs, Out<T> z, In<T> x) {
  const Shape s = z.shape();
  const Tile<T> v = load_like(x, z).reshape({s[0], s[1] / 2, 2});
  z.store(concat({v.slice(2, 1, 1), v.slice(2, 0, 1)}, -1).reshape(s));
};

// A slice of a constant tile, and of an iota (each element keeps its value).
template <Element T>
TESSERA_KERNEL(slice_made, Out<T> z) {
  const Shape s = z.shape();
  const Tile<T> c = Tile<T>::full({s[0], s[1] + 5}, T(kConst<T>)).slice(1, 2, s[1]);
  const Tile<T> i = Tile<T>::iota({s[0] + 3, s[1]}, 0).slice(0, 3, s[0]);
  z.store(c + i);
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
  rows.push_back({"concat_swapped_halves" + t, [](Rng& rng) {
                    constexpr int64_t TN = 32;
                    const Shape s{rng.ragged(4, 3), rng.ragged(TN, 3)};
                    G<T> x(s, kIn<T>), z(s, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)swap_halves<T>(z.view().partition({4, TN}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          const int64_t c = i[1] / TN * TN + (i[1] % TN + TN / 2) % TN;
                          return c < s[1] ? x.at({i[0], c}) : 0.0;
                        },
                        0);
                  }});
  rows.push_back({"slice_rows_at_odd_start" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(8, 3), rng.ragged(16, 2)};
                    G<T> x(s, kIn<T>), z({ceil_div(s[0], 8) * 4, s[1]}, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)row_window<T>(z.view().partition({4, 16}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          const int64_t r = i[0] / 4 * 8 + 3 + i[0] % 4;
                          return r < s[0] ? x.at({r, i[1]}) : 0.0;
                        },
                        0);
                  }});
  rows.push_back({"concat_three_with_a_constant" + t, [](Rng& rng) {
                    const int64_t blocks = rng.integer(1, 4);
                    const Shape s{blocks * 6 - rng.integer(0, 5), rng.ragged(16, 2)};
                    const Shape xs{blocks * 2 - rng.integer(0, 1), s[1]};
                    const Shape ys{blocks, s[1]};
                    G<T> x(xs, kIn<T>), y(ys, kIn<T>), z(s, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    y.fill_uniform(rng, -50, 50);
                    (void)join_three<T>(z.view().partition({6, 16}), x.view(), y.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          const int64_t b = i[0] / 6, k = i[0] % 6;
                          if (k < 2) return b * 2 + k < xs[0] ? x.at({b * 2 + k, i[1]}) : 0.0;
                          if (k < 5) return kConst<T>;
                          return y.at({b, i[1]});
                        },
                        0);
                  }});
  rows.push_back({"concat_swapped_pairs_3d_view" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(2, 3), rng.ragged(16, 3)};
                    G<T> x(s, kIn<T>), z(s, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)swap_pairs<T>(z.view().partition({2, 16}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          const int64_t c = i[1] ^ 1;
                          return c < s[1] ? x.at({i[0], c}) : 0.0;
                        },
                        0);
                  }});
  rows.push_back({"slice_of_constant_and_iota" + t, [](Rng& rng) {
                    G<T> z({rng.ragged(8, 3), rng.ragged(16, 2)}, kOut<T>);
                    (void)slice_made<T>(z.view().partition({8, 16})).sync();
                    expect_matches(
                        z, [](const Shape& i) { return kConst<T> + double(3 + i[0] % 8); }, 0);
                  }});
  return rows;
}

std::vector<Case> slice_rows() {
  std::vector<Case> rows;
  for (auto&& part :
       {rows_for<float>(), rows_for<half>(), rows_for<bfloat16>(), rows_for<int32_t>()})
    rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}
TESSERA_OP_CASES(Slice, slice_rows());

}  // namespace
}  // namespace tessera::test

// load_at: tiles that start at any element, not only at multiples of the tile shape, padded
// where they leave the tensor. A 1-D three-point stencil (each block reads its tile shifted by -1,
// 0 and +1: halos that cross into the neighbours' tiles and past both ends); a 2-D tile shifted by
// a run-time offset (Scalar parameters, negative and past the end), with the zero pad and a custom
// one; and one row of a table at a run-time position (a KV-cache read), all columns of it.
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// z[i] = x[i - 1] + 2 x[i] + x[i + 1], x zero outside.
template <Element T>
TESSERA_KERNEL(stencil3, Out<T> z, In<T> x) {
  const int64_t n = z.shape()[0];
  const Index first = tile_index(0) * static_cast<int32_t>(n);
  const Tile<T> left = load_at(x, {first - 1}, {n});
  const Tile<T> mid = load_at(x, {first}, {n});
  const Tile<T> right = load_at(x, {first + 1}, {n});
  z.store(left + mid * T(2) + right);
};

template <Element T>
void run_stencil(Rng& rng) {
  const Shape tile{64};
  const Shape shape{rng.ragged(64, 4)};
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -20, 20);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  (void)stencil3<T>(z.view().partition(tile), x.view()).sync();
  auto x_or_0 = [&](int64_t i) { return i >= 0 && i < shape[0] ? x.at({i}) : 0.0; };
  expect_matches(
      z,
      [&](const Shape& i) {
        return cast_reference<T>(x_or_0(i[0] - 1) + 2 * x_or_0(i[0]) + x_or_0(i[0] + 1));
      },
      2 * default_rtol<T>(),
      [&](const Shape& i) {
        return std::fmax(
            std::fabs(x_or_0(i[0] - 1)) + 2 * std::fabs(x_or_0(i[0])) + std::fabs(x_or_0(i[0] + 1)),
            1e-3);
      });
}

template <Element T>
constexpr double kCustomPad = is_float_v<T> ? -3.5 : -7;

// Block (i, j) reads the [TM, TN] tile whose first element is (i TM + dr, j TN + dc).
template <Element T, bool CustomPad>
TESSERA_KERNEL(shifted_tile, Out<T> z, In<T> x, Scalar<int32_t> dr, Scalar<int32_t> dc) {
  const Shape& s = z.shape();
  const Index r = tile_index(0) * static_cast<int32_t>(s[0]) + dr;
  const Index c = tile_index(1) * static_cast<int32_t>(s[1]) + dc;
  z.store(load_at(x, {r, c}, s, CustomPad ? Pad::value_of(kCustomPad<T>) : Pad::zero()));
};

template <Element T, bool CustomPad>
void run_shifted(Rng& rng) {
  const Shape tile{8, 16};
  const Shape shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  const Shape in_shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  Guarded<T> x(in_shape, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -100, 100);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  const auto dr = static_cast<int32_t>(rng.integer(-9, 9));
  const auto dc = static_cast<int32_t>(rng.integer(-20, 20));
  (void)shifted_tile<T, CustomPad>(z.view().partition(tile), x.view(), dr, dc).sync();
  const double pad = CustomPad ? kCustomPad<T> : 0;
  expect_matches(
      z,
      [&](const Shape& i) {
        const int64_t r = i[0] + dr, c = i[1] + dc;
        return r >= 0 && c >= 0 && r < in_shape[0] && c < in_shape[1] ? x.at({r, c}) : pad;
      },
      0);
}

// z [B, D]: every row is row `pos` of the table x [L, D] (pos may lie past the end: zeros).
template <Element T>
TESSERA_KERNEL(row_at, Out<T> z, In<T> table, Scalar<int32_t> pos) {
  const Shape& s = z.shape();
  const Tile<T> row = load_at(table, {pos, tile_index(1) * static_cast<int32_t>(s[1])}, {1, s[1]});
  z.store(broadcast(row, s));
};

template <Element T>
void run_row_at(Rng& rng) {
  const Shape tile{4, 32};
  const Shape table_shape{rng.integer(1, 40), rng.ragged(32, 3)};
  const Shape shape{rng.ragged(4, 2), table_shape[1]};
  Guarded<T> table(table_shape, Guarded<T>::Fill::Input);
  table.fill_uniform(rng, -50, 50);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  const auto pos = static_cast<int32_t>(rng.integer(0, table_shape[0]));  // the end included
  (void)row_at<T>(z.view().partition(tile), table.view(), pos).sync();
  expect_matches(
      z,
      [&](const Shape& i) {
        return pos < table_shape[0] ? table.at({pos, i[1]}) : 0.0;
      },
      0);
}

template <Element... Ts>
void add_rows(std::vector<Case>& rows) {
  (rows.push_back({"stencil3_halo_" + dtype_tag<Ts>(), run_stencil<Ts>}), ...);
  (rows.push_back({"shifted_tile_zero_pad_" + dtype_tag<Ts>(), run_shifted<Ts, false>}), ...);
  (rows.push_back({"shifted_tile_custom_pad_" + dtype_tag<Ts>(), run_shifted<Ts, true>}), ...);
  (rows.push_back({"row_at_run_time_position_" + dtype_tag<Ts>(), run_row_at<Ts>}), ...);
}

std::vector<Case> load_at_rows() {
  std::vector<Case> rows;
  add_rows<float, half, bfloat16, int32_t, int8_t, double>(rows);
  return rows;
}

TESSERA_OP_CASES(LoadAt, load_at_rows());

}  // namespace
}  // namespace tessera::test

// Accum: blocks add into one tensor, their tiles overlapping. Each row runs a launch whose blocks
// all add into the same elements and compares with a double reference: a split-K GEMM (each
// block multiplies one K chunk of one C tile and adds it into C, on top of C's initial values),
// a histogram (each block counts the bins of its chunk of values and adds the counts), and ragged
// adds at run-time offsets that reach past the tensor (dropped, and the guard band stays intact).
// The CPU backend sums in its documented order; the GPU's atomic adds in any order, so float
// results are compared within the rounding of that many adds.
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// Grid (M tiles, N tiles, S splits): block (i, j, s) multiplies the K tiles s, s + S, ... of its
// C tile and adds the product into c.
template <Element A, int BM, int BN, int BK>
TESSERA_KERNEL(split_k_gemm, Accum<float> c, In<A> a, In<A> b) {
  const Index i = tile_index(0), j = tile_index(1), s = tile_index(2), splits = num_tiles(2);
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  for_range(s, k_tiles, splits, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  c.add(acc, {i, j});
};

template <Element A, int BM, int BN, int BK>
void run_split_k(Rng& rng) {
  const int64_t M = rng.ragged(BM, 3), N = rng.ragged(BN, 3), K = rng.ragged(BK, 6);
  const int64_t S = rng.integer(2, 4);
  Guarded<A> a({M, K}, Guarded<A>::Fill::Input), b({K, N}, Guarded<A>::Fill::Input);
  a.fill_uniform(rng, -2, 2);
  b.fill_uniform(rng, -2, 2);
  Guarded<float> c({M, N}, Guarded<float>::Fill::Input);
  c.fill_uniform(rng, -2, 2);  // the adds land on what c held
  std::vector<double> c0(static_cast<size_t>(M * N));
  for (int64_t r = 0; r < M; ++r)
    for (int64_t q = 0; q < N; ++q) c0[static_cast<size_t>(r * N + q)] = c.at({r, q});
  const Shape grid{ceil_div(M, BM), ceil_div(N, BN), S};
  (void)split_k_gemm<A, BM, BN, BK>(c.view().accumulate(grid), a.view(), b.view()).sync();
  auto dot = [&](const Shape& o, bool magnitudes) {
    const double init = c0[static_cast<size_t>(o[0] * N + o[1])];
    double sum = magnitudes ? std::fabs(init) : init;
    for (int64_t k = 0; k < K; ++k) {
      const double p = a.at({o[0], k}) * b.at({k, o[1]});
      sum += magnitudes ? std::fabs(p) : p;
    }
    return sum;
  };
  // f32 rounding once per K tile and once per add of a split's sum.
  const double rtol = 1e-6 * static_cast<double>(ceil_div(K, BK) + S + 1);
  expect_matches(
      c, [&](const Shape& o) { return dot(o, false); }, rtol,
      [&](const Shape& o) { return std::fmax(dot(o, true), 1e-3); });
}

// Each block counts the bins of its chunk of `values` (i32 bins in [0, B); values outside count
// nowhere) as one [B] tile and adds it at bin 0: all blocks add into every bin.
template <int N, int B>
TESSERA_KERNEL(histogram, Accum<int32_t> hist, In<int32_t> values) {
  const Tile<int32_t> v = load(values, {tile_index(0)}, {N}, Pad::value_of(-1));
  const Tile<bool> hit = v.reshape({N, 1}) == iota<int32_t>({1, B}, 1);
  hist.add_at(sum(cast<int32_t>(hit), 0).reshape({B}), {0});
};

void run_histogram(Rng& rng) {
  constexpr int N = 128, B = 16;
  const int64_t n = rng.ragged(N, 9);
  Guarded<int32_t> values({n}, Guarded<int32_t>::Fill::Input);
  values.fill_uniform(rng, -2, B + 1);  // some outside [0, B): counted nowhere
  Guarded<int32_t> hist({B}, Guarded<int32_t>::Fill::Input);
  hist.fill([](const Shape& i) { return static_cast<double>(i[0]); });  // initial counts
  (void)histogram<N, B>(hist.view().accumulate({ceil_div(n, N)}), values.view()).sync();
  std::vector<double> want(B);
  for (int64_t b = 0; b < B; ++b) want[static_cast<size_t>(b)] = static_cast<double>(b);
  for (int64_t i = 0; i < n; ++i) {
    const auto v = static_cast<int64_t>(values.at({i}));
    if (v >= 0 && v < B) want[static_cast<size_t>(v)] += 1;
  }
  expect_matches(
      hist, [&](const Shape& i) { return want[static_cast<size_t>(i[0])]; }, 0);
}

// Every block adds the same [R, C] tile of x at (dr, dc), a run-time offset that may reach past
// any edge of z: elements outside z are dropped, the rest receive one add per block.
template <Element T>
TESSERA_KERNEL(add_at_offset, Accum<T> z, In<T> x, Scalar<int32_t> dr, Scalar<int32_t> dc) {
  z.add_at(load(x, {0, 0}, {8, 32}), {dr, dc});
};

template <Element T>
void run_offset(Rng& rng) {
  const Shape shape{rng.ragged(8, 2), rng.ragged(32, 2)};
  const int64_t blocks = rng.integer(1, 5);
  Guarded<T> x({8, 32}, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -50, 50);
  Guarded<T> z(shape, Guarded<T>::Fill::Input);
  z.fill_uniform(rng, -50, 50);
  std::vector<double> z0;
  for_each_index(shape, [&](const Shape& i) { z0.push_back(z.at(i)); });
  const auto dr = static_cast<int32_t>(rng.integer(-6, static_cast<int64_t>(shape[0])));
  const auto dc = static_cast<int32_t>(rng.integer(-20, static_cast<int64_t>(shape[1])));
  (void)add_at_offset<T>(z.view().accumulate({blocks}), x.view(), dr, dc).sync();
  expect_matches(
      z,
      [&](const Shape& i) {
        const double init = z0[static_cast<size_t>(i[0] * shape[1] + i[1])];
        const int64_t r = i[0] - dr, c = i[1] - dc;
        const bool covered = r >= 0 && c >= 0 && r < 8 && c < 32;
        return init + (covered ? static_cast<double>(blocks) * x.at({r, c}) : 0.0);
      },
      std::is_integral_v<T> ? 0 : default_rtol<T>() * 8,
      [&](const Shape&) { return 50.0 * static_cast<double>(blocks + 1); });
}

std::vector<Case> accumulate_rows() {
  std::vector<Case> rows;
  rows.push_back({"split_k_gemm_f16_into_f32", run_split_k<half, 32, 32, 16>});
  rows.push_back({"split_k_gemm_f32", run_split_k<float, 16, 32, 8>});
  rows.push_back({"histogram_i32_of_overlapping_blocks", run_histogram});
  rows.push_back({"add_at_run_time_offset_is_clipped_to_the_tensor_f32", run_offset<float>});
  rows.push_back({"add_at_run_time_offset_is_clipped_to_the_tensor_f64", run_offset<double>});
  rows.push_back({"add_at_run_time_offset_is_clipped_to_the_tensor_i32", run_offset<int32_t>});
  rows.push_back({"add_at_run_time_offset_is_clipped_to_the_tensor_i64", run_offset<int64_t>});
  return rows;
}

TESSERA_OP_CASES(Accumulate, accumulate_rows());

}  // namespace
}  // namespace tessera::test

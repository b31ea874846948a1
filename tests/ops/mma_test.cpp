// mma(a, b, acc) = a @ b + acc, in the loop a GEMM uses: c = a[M, K] @ b[K, N] + c0, one
// [BM, BN] tile of c per block, a for_range over the K tiles with the accumulator carried, and
// M, N, K ragged (zero padding makes the partial K tile contribute nothing extra).
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element A, Element C, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_kernel, Out<C> c, In<A> a, In<A> b, In<C> c0) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<C> acc = load(c0, {i, j}, {BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  c.store(acc);
};

template <Element A, Element C, int BM, int BN, int BK>
void run_mma(Rng& rng) {
  const int64_t M = rng.ragged(BM, 3), N = rng.ragged(BN, 3), K = rng.ragged(BK, 4);
  const double range = std::is_integral_v<A> ? 100 : 2;
  Guarded<A> a({M, K}, Guarded<A>::Fill::Input), b({K, N}, Guarded<A>::Fill::Input);
  Guarded<C> c0({M, N}, Guarded<C>::Fill::Input);
  a.fill_uniform(rng, -range, range);
  b.fill_uniform(rng, -range, range);
  c0.fill_uniform(rng, -range, range);
  Guarded<C> c({M, N}, Guarded<C>::Fill::Output);
  (void)gemm_kernel<A, C, BM, BN, BK>(c.view().partition({BM, BN}), a.view(), b.view(), c0.view())
      .sync();

  auto dot = [&](const Shape& o, bool magnitudes) {
    double s = magnitudes ? std::fabs(c0.at(o)) : c0.at(o);
    for (int64_t k = 0; k < K; ++k) {
      const double p = a.at({o[0], k}) * b.at({k, o[1]});
      s += magnitudes ? std::fabs(p) : p;
    }
    return s;
  };
  // Products may cancel: the error is relative to the sum of their magnitudes. The accumulator
  // is rounded to C once per K tile.
  const double rtol = default_rtol<C>() * static_cast<double>(ceil_div(K, BK));
  expect_matches(
      c, [&](const Shape& o) { return dot(o, false); }, rtol,
      [&](const Shape& o) { return std::fmax(dot(o, true), 1e-3); });
}

// mma(a, b, acc, Precision::tf32): f32 operands rounded to TF32 (10 fraction bits) before the
// products, on the GPU's tensor cores. Within docs/dsl.md's bound of the exact double result:
// |c - exact| <= (2^-10 + 2^-22) * sum |a b| + f32's summation error over |c0| + sum |a b|; and
// not exact f32 (the rounding is really applied).
template <int BM, int BN, int BK>
TESSERA_KERNEL(gemm_tf32_kernel, Out<float> c, In<float> a, In<float> b, In<float> c0) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> acc = load(c0, {i, j}, {BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc, Precision::tf32);
  });
  c.store(acc);
};

template <int BM, int BN, int BK>
void run_mma_tf32(Rng& rng) {
  const int64_t M = rng.ragged(BM, 3), N = rng.ragged(BN, 3), K = rng.ragged(BK, 4);
  Guarded<float> a({M, K}, Guarded<float>::Fill::Input), b({K, N}, Guarded<float>::Fill::Input);
  Guarded<float> c0({M, N}, Guarded<float>::Fill::Input);
  a.fill_uniform(rng, -2, 2);
  b.fill_uniform(rng, -2, 2);
  c0.fill_uniform(rng, -2, 2);
  Guarded<float> c({M, N}, Guarded<float>::Fill::Output);
  (void)gemm_tf32_kernel<BM, BN, BK>(c.view().partition({BM, BN}), a.view(), b.view(), c0.view())
      .sync();
  auto dot = [&](const Shape& o, bool magnitudes) {
    double s = magnitudes ? std::fabs(c0.at(o)) : c0.at(o);
    for (int64_t k = 0; k < K; ++k) {
      const double p = a.at({o[0], k}) * b.at({k, o[1]});
      s += magnitudes ? std::fabs(p) : p;
    }
    return s;
  };
  const double rtol = 0x1p-10 + 0x1p-22 + default_rtol<float>() * static_cast<double>(K);
  expect_matches(
      c, [&](const Shape& o) { return dot(o, false); }, rtol,
      [&](const Shape& o) { return std::fmax(dot(o, true), 1e-3); });
  double worst = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      worst = std::fmax(
          worst, std::fabs(c.at({i, j}) - dot({i, j}, false)) / std::fmax(dot({i, j}, true), 1e-3));
  EXPECT_GT(worst, 0x1p-18) << "no element shows TF32's rounding: were the operands rounded?";
}

std::vector<Case> mma_rows() {
  return {
      {"f16_acc_f32", run_mma<half, float, 16, 16, 16>},
      {"bf16_acc_f32", run_mma<bfloat16, float, 16, 16, 16>},
      {"f16_acc_f16", run_mma<half, half, 16, 16, 16>},
      {"f32_acc_f32", run_mma<float, float, 16, 16, 16>},
      {"f64_acc_f64", run_mma<double, double, 16, 16, 16>},
      {"i8_acc_i32", run_mma<int8_t, int32_t, 16, 16, 16>},
      {"f16_acc_f32_tall_tiles", run_mma<half, float, 32, 8, 8>},
      {"f32_acc_f32_wide_tiles", run_mma<float, float, 8, 32, 4>},
      {"f32_tf32_acc_f32", run_mma_tf32<16, 16, 16>},
      {"f32_tf32_acc_f32_ragged_k_steps", run_mma_tf32<32, 16, 12>},
  };
}

TESSERA_OP_CASES(Mma, mma_rows());

}  // namespace
}  // namespace tessera::test

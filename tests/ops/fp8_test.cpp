// fp8 (f8e4m3, f8e5m2) tiles: casts from and to every float type (and i32), compared exactly
// with the OCP rules (round to nearest even, saturation to the largest finite value, NaN), and
// the storage ops an fp8 tile takes without a cast (load, store, load_t, select, reshape): a
// quantize / dequantize round trip with a scale, as fp8 GEMM inputs are made. The first elements
// of each cast input are edge cases (each format's largest value and its rounding boundary,
// ties, subnormals, infinities, NaN); the rest are random over the formats' range.
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element From, Element To>
TESSERA_KERNEL(fp8_cast, Out<To> z, In<From> x) {
  z.store(load_like(x, z).template cast<To>());
};

// z = cast<F8>(x * scale): quantize, and q = cast<float>(z) / scale back.
template <Element F8>
TESSERA_KERNEL(quantize, Out<F8> z, In<float> x, Scalar<float> scale) {
  z.store((load_like(x, z) * scale).template cast<F8>());
};
template <Element F8>
TESSERA_KERNEL(dequantize, Out<float> q, In<F8> z, Scalar<float> scale) {
  q.store(load_like(z, q).template cast<float>() / scale);
};

// fp8 tiles moved without arithmetic: transposed loads, a select between two fp8 tiles (the
// condition computed from their widened values), a reshape.
template <Element F8>
TESSERA_KERNEL(fp8_transposed, Out<F8> z, In<F8> x) {
  z.store(load_t(x, {tile_index(0), tile_index(1)}, z.shape()));
};
template <Element F8>
TESSERA_KERNEL(fp8_select_larger, Out<F8> z, In<F8> a, In<F8> b) {
  const Tile<F8> x = load_like(a, z), y = load_like(b, z);
  z.store(select(x.template cast<float>() >= y.template cast<float>(), x, y));
};
template <Element F8>
TESSERA_KERNEL(fp8_reshape, Out<F8> z, In<F8> x) {
  z.store(load(x, {tile_index(0), 0}, {4, 8}).reshape({32}));
};

const double kEdges[] = {0.0,
                         -0.0,
                         1.0,
                         -1.5,
                         448.0,
                         -448.0,
                         464.0,
                         465.0,
                         480.0,
                         1000.0,
                         57344.0,
                         61440.0,
                         61439.0,
                         -7e4,
                         0.0625,
                         0.001953125,
                         0.0009765625,
                         0.0029296875,
                         1.52587890625e-5,
                         7.62939453125e-6,
                         1.1e-5,
                         3.25,
                         3.75,
                         -13.0,
                         240.0,
                         248.0,
                         INFINITY,
                         -INFINITY,
                         NAN};

template <Element T>
double random_value(Rng& rng) {
  switch (rng.integer(0, 2)) {
    case 0:
      return (rng.coin() ? 1 : -1) * std::pow(2.0, rng.uniform(-20, 17));  // every binade
    case 1:
      return rng.uniform(-4, 4);
    default:
      if constexpr (std::is_integral_v<T>)
        return static_cast<double>(rng.integer(-70000, 70000));
      else
        return static_cast<double>(rng.integer(-600, 600)) + 0.5;
  }
}

template <Element From, Element To>
void run_cast(Rng& rng) {
  const Shape tile{8, 16};
  const Shape shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  Guarded<From> x(shape, Guarded<From>::Fill::Input);
  size_t flat = 0;
  x.fill([&](const Shape&) {
    const size_t i = flat++;
    if (i < std::size(kEdges) && (is_float_v<From> || std::isfinite(kEdges[i]))) return kEdges[i];
    return random_value<From>(rng);
  });
  Guarded<To> z(shape, Guarded<To>::Fill::Output);
  (void)fp8_cast<From, To>(z.view().partition(tile), x.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return cast_reference<To>(x.at(i)); }, 0);
}

template <Element F8>
void run_quantize_round_trip(Rng& rng) {
  const Shape shape{rng.ragged(128, 3)};
  Guarded<float> x(shape, Guarded<float>::Fill::Input), q(shape, Guarded<float>::Fill::Output);
  Guarded<F8> z(shape, Guarded<F8>::Fill::Output);
  x.fill_uniform(rng, -3, 3);
  const float scale = std::is_same_v<F8, float8_e4m3> ? 100.0f : 1e4f;
  (void)quantize<F8>(z.view().partition({128}), x.view(), scale).sync();
  expect_matches(
      z, [&](const Shape& i) { return cast_reference<F8>(double(float(x.at(i) * scale))); }, 0);
  (void)dequantize<F8>(q.view().partition({128}), z.view(), scale).sync();
  expect_matches(
      q, [&](const Shape& i) { return double(float(z.at(i)) / scale); }, 0);
}

template <Element F8>
void run_transposed(Rng& rng) {
  const Shape s{rng.ragged(16, 3), rng.ragged(8, 3)};
  Guarded<F8> x(s, Guarded<F8>::Fill::Input), z({s[1], s[0]}, Guarded<F8>::Fill::Output);
  x.fill_uniform(rng, -400, 400);
  (void)fp8_transposed<F8>(z.view().partition({8, 16}), x.view()).sync();
  expect_matches(
      z,
      [&](const Shape& i) {
        return x.at({i[1], i[0]});
      },
      0);
}

template <Element F8>
void run_select(Rng& rng) {
  const Shape s{rng.ragged(8, 2), rng.ragged(16, 2)};
  Guarded<F8> a(s, Guarded<F8>::Fill::Input), b(s, Guarded<F8>::Fill::Input);
  Guarded<F8> z(s, Guarded<F8>::Fill::Output);
  a.fill_uniform(rng, -100, 100);
  b.fill_uniform(rng, -100, 100);
  (void)fp8_select_larger<F8>(z.view().partition({8, 16}), a.view(), b.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return std::max(a.at(i), b.at(i)); }, 0);
}

template <Element F8>
void run_reshape(Rng& rng) {
  const int64_t tiles = rng.integer(1, 4);
  Guarded<F8> x({tiles * 4, 8}, Guarded<F8>::Fill::Input),
      z({tiles * 32}, Guarded<F8>::Fill::Output);
  x.fill_uniform(rng, -10, 10);
  (void)fp8_reshape<F8>(z.view().partition({32}), x.view()).sync();
  expect_matches(
      z,
      [&](const Shape& i) {
        return x.at({i[0] / 8, i[0] % 8});
      },
      0);
}

template <Element From, Element... Tos>
void add_casts(std::vector<Case>& rows) {
  (rows.push_back({dtype_tag<From>() + "_to_" + dtype_tag<Tos>(), run_cast<From, Tos>}), ...);
}

template <Element F8>
void add_storage_rows(std::vector<Case>& rows) {
  const std::string t = "_" + dtype_tag<F8>();
  rows.push_back({"quantize_round_trip" + t, run_quantize_round_trip<F8>});
  rows.push_back({"load_t_transposes_ragged_tiles" + t, run_transposed<F8>});
  rows.push_back({"select_between_fp8_tiles" + t, run_select<F8>});
  rows.push_back({"reshape" + t, run_reshape<F8>});
}

std::vector<Case> fp8_rows() {
  std::vector<Case> rows;
  using E4 = float8_e4m3;
  using E5 = float8_e5m2;
  add_casts<float, E4, E5>(rows);
  add_casts<half, E4, E5>(rows);
  add_casts<bfloat16, E4, E5>(rows);
  add_casts<double, E4, E5>(rows);
  add_casts<int32_t, E4, E5>(rows);
  add_casts<E4, float, half, bfloat16, double, int32_t, E4, E5>(rows);
  add_casts<E5, float, half, bfloat16, double, int32_t, E4, E5>(rows);
  add_storage_rows<E4>(rows);
  add_storage_rows<E5>(rows);
  return rows;
}

TESSERA_OP_CASES(Fp8, fp8_rows());

}  // namespace
}  // namespace tessera::test

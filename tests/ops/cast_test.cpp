// Casts among f32, f16, bf16 and i32, compared exactly with the IEEE rules: floats round to
// nearest even (subnormals included, overflow to infinity), float-to-integer truncates toward
// zero and saturates (NaN gives 0). The first elements of each input are edge cases (ties,
// saturation bounds, infinities, NaN, subnormals, double-rounding traps); the rest are random
// over many magnitudes.
#include <climits>
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element From, Element To>
TESSERA_KERNEL(cast_kernel, Out<To> z, In<From> x) {
  z.store(load_like(x, z).template cast<To>());
};

// Values every float source starts with (each is rounded to the source type first).
const double kFloatEdges[] = {0.0,
                              -0.0,
                              0.5,
                              -0.5,
                              1.5,
                              2.5,
                              -2.5,
                              -2.7,
                              2.7,  // truncation
                              2049,
                              2051,
                              4097,
                              257,
                              259,  // f16 / bf16 ties at integers
                              65504,
                              65519,
                              65520,
                              -65520,
                              1e5,  // the f16 overflow boundary
                              5.9604644775390625e-8,
                              2.98023223876953125e-8,
                              8.9406967163085938e-8,
                              1e-6,  // f16 subnormals
                              2147483520.0,
                              2147483647.0,
                              2147483648.0,
                              -2147483648.0,
                              -2147483904.0,
                              3e9,
                              -3e9,  // i32 bounds
                              3.4e38,
                              1e-40,
                              INFINITY,
                              -INFINITY,
                              NAN};

// Values every integer source starts with.
const int64_t kIntEdges[] = {
    0,        1,         -1,        2049,     2051,
    65504,    65519,     65520,     -65520,   16777217,
    16777219, INT32_MAX, INT32_MIN, 33554435, 16842753 /* 2^24 + 2^16 + 1: rounds up in bf16 */,
    -16842753};

template <Element From>
double random_value(Rng& rng) {
  if constexpr (is_float_v<From>) {
    switch (rng.integer(0, 2)) {
      case 0:
        return (rng.coin() ? 1 : -1) * std::pow(10.0, rng.uniform(-9, 10));  // magnitudes
      case 1:
        return rng.uniform(-3, 3);  // fractions
      default:
        return static_cast<double>(rng.integer(-3000, 3000)) + 0.5;  // ties
    }
  } else {
    switch (rng.integer(0, 2)) {
      case 0:
        return static_cast<double>(rng.integer(INT32_MIN, INT32_MAX));
      case 1:
        return std::ldexp(rng.coin() ? 1 : -1, static_cast<int>(rng.integer(0, 30))) +
               static_cast<double>(rng.integer(-3, 3));  // near powers of two
      default:
        return static_cast<double>(rng.integer(-70000, 70000));
    }
  }
}

template <Element From, Element To>
void run_cast(Rng& rng) {
  const Shape tile{8, 16};
  const Shape shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  std::vector<double> edges;
  if constexpr (is_float_v<From>)
    edges.assign(std::begin(kFloatEdges), std::end(kFloatEdges));
  else
    for (int64_t v : kIntEdges) edges.push_back(static_cast<double>(v));
  Guarded<From> x(shape, Guarded<From>::Fill::Input);
  int64_t flat = 0;
  x.fill([&](const Shape&) {
    const size_t i = static_cast<size_t>(flat++);
    return i < edges.size() ? edges[i] : random_value<From>(rng);
  });
  Guarded<To> z(shape, Guarded<To>::Fill::Output);
  (void)cast_kernel<From, To>(z.view().partition(tile), x.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return cast_reference<To>(x.at(i)); }, 0);
}

template <Element From, Element... Tos>
void add_rows(std::vector<Case>& rows) {
  (rows.push_back({dtype_tag<From>() + "_to_" + dtype_tag<Tos>(), run_cast<From, Tos>}), ...);
}

std::vector<Case> cast_rows() {
  std::vector<Case> rows;
  add_rows<float, float, half, bfloat16, int32_t>(rows);
  add_rows<half, float, half, bfloat16, int32_t>(rows);
  add_rows<bfloat16, float, half, bfloat16, int32_t>(rows);
  add_rows<int32_t, float, half, bfloat16, int32_t>(rows);
  return rows;
}

TESSERA_OP_CASES(Cast, cast_rows());

}  // namespace
}  // namespace tessera::test

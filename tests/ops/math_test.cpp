// The math ops of one operand that joined exp and log: exp2 log2 log1p expm1 erf sigmoid, the
// roundings floor ceil round trunc (round on exact halves, to test ties to even), and the tests
// isnan isinf (on tiles that mix numbers, NaNs and infinities), in every float dtype, on tiles of
// rank 1 to 3 with ragged edges.
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// Inputs drawn uniformly from [low, high]; `halves` draws multiples of 0.5 instead (so that
// round meets its ties).
#define TESSERA_MATH_OP(Name, text, dsl_expr, ref_expr, lo, hi, halves_) \
  struct Name {                                                          \
    static constexpr const char* name = text;                            \
    static constexpr double low = lo, high = hi;                         \
    static constexpr bool halves = halves_;                              \
    template <Element T>                                                 \
    static Tile<T> dsl(const Tile<T>& x) {                               \
      return dsl_expr;                                                   \
    }                                                                    \
    static double ref(double x) { return ref_expr; }                     \
  };
TESSERA_MATH_OP(Exp2, "exp2", exp2(x), std::exp2(x), -12, 12, false)
TESSERA_MATH_OP(Log2, "log2", log2(x), std::log2(x), 0.01, 1000, false)
TESSERA_MATH_OP(Log1p, "log1p", log1p(x), std::log1p(x), -0.9, 10, false)
TESSERA_MATH_OP(Expm1, "expm1", expm1(x), std::expm1(x), -5, 5, false)
TESSERA_MATH_OP(Erf, "erf", erf(x), std::erf(x), -3, 3, false)
TESSERA_MATH_OP(Sigmoid, "sigmoid", sigmoid(x), 1 / (1 + std::exp(-x)), -20, 20, false)
TESSERA_MATH_OP(Floor, "floor", floor(x), std::floor(x), -50, 50, false)
TESSERA_MATH_OP(Ceil, "ceil", ceil(x), std::ceil(x), -50, 50, false)
TESSERA_MATH_OP(Trunc, "trunc", trunc(x), std::trunc(x), -50, 50, false)
TESSERA_MATH_OP(Round, "round", round(x), std::nearbyint(x), -50, 50, false)
TESSERA_MATH_OP(RoundTies, "round_ties_to_even", round(x), std::nearbyint(x), -50, 50, true)
#undef TESSERA_MATH_OP

template <class Op, Element T>
TESSERA_KERNEL(math_kernel, Out<T> z, In<T> x) {
  z.store(Op::dsl(load_like(x, z)));
};

// A random tile shape of rank 1 to 3 and a ragged tensor shape made of it.
inline std::pair<Shape, Shape> random_shapes(Rng& rng) {
  const Shape tiles[] = {{64}, {8, 16}, {4, 4, 8}};
  const Shape& tile = tiles[rng.integer(0, 2)];
  Shape shape;
  for (int64_t t : tile) shape.push_back(rng.ragged(t, 3));
  return {tile, shape};
}

template <class Op, Element T>
void run_math(Rng& rng) {
  const auto [tile, shape] = random_shapes(rng);
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  if (Op::halves)
    x.fill([&](const Shape&) { return 0.5 * static_cast<double>(rng.integer(-100, 100)); });
  else
    x.fill_uniform(rng, Op::low, Op::high);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  (void)math_kernel<Op, T>(z.view().partition(tile), x.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return cast_reference<T>(Op::ref(x.at(i))); }, default_rtol<T>());
}

// isnan / isinf, stored as i32 (cast from bool). A quarter of the elements are NaN, a quarter
// infinities of either sign, the rest finite (large ones included).
struct IsNan {
  static constexpr const char* name = "isnan";
  template <Element T>
  static Tile<bool> dsl(const Tile<T>& x) {
    return isnan(x);
  }
  static bool ref(double x) { return std::isnan(x); }
};
struct IsInf {
  static constexpr const char* name = "isinf";
  template <Element T>
  static Tile<bool> dsl(const Tile<T>& x) {
    return isinf(x);
  }
  static bool ref(double x) { return std::isinf(x); }
};

template <class Op, Element T>
TESSERA_KERNEL(classify_kernel, Out<int32_t> z, In<T> x) {
  z.store(Op::dsl(load_like(x, z)).template cast<int32_t>());
};

template <class Op, Element T>
void run_classify(Rng& rng) {
  const auto [tile, shape] = random_shapes(rng);
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill([&](const Shape&) -> double {
    switch (rng.integer(0, 3)) {
      case 0:
        return NAN;
      case 1:
        return rng.coin() ? INFINITY : -INFINITY;
      default:
        return rng.uniform(-60000, 60000);
    }
  });
  Guarded<int32_t> z(shape, Guarded<int32_t>::Fill::Output);
  (void)classify_kernel<Op, T>(z.view().partition(tile), x.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return Op::ref(x.at(i)) ? 1.0 : 0.0; }, 0);
}

template <class Op, Element... Ts>
void add_math_rows(std::vector<Case>& rows) {
  (rows.push_back({std::string(Op::name) + "_" + dtype_tag<Ts>(), run_math<Op, Ts>}), ...);
}
template <class Op, Element... Ts>
void add_classify_rows(std::vector<Case>& rows) {
  (rows.push_back({std::string(Op::name) + "_" + dtype_tag<Ts>(), run_classify<Op, Ts>}), ...);
}

std::vector<Case> math_rows() {
  std::vector<Case> rows;
  add_math_rows<Exp2, float, half, bfloat16, double>(rows);
  add_math_rows<Log2, float, half, bfloat16, double>(rows);
  add_math_rows<Log1p, float, half, bfloat16, double>(rows);
  add_math_rows<Expm1, float, half, bfloat16, double>(rows);
  add_math_rows<Erf, float, half, bfloat16, double>(rows);
  add_math_rows<Sigmoid, float, half, bfloat16, double>(rows);
  add_math_rows<Floor, float, half, bfloat16, double>(rows);
  add_math_rows<Ceil, float, half, bfloat16, double>(rows);
  add_math_rows<Trunc, float, half, bfloat16, double>(rows);
  add_math_rows<Round, float, half, bfloat16, double>(rows);
  add_math_rows<RoundTies, float, half, bfloat16, double>(rows);
  add_classify_rows<IsNan, float, half, bfloat16, double>(rows);
  add_classify_rows<IsInf, float, half, bfloat16, double>(rows);
  return rows;
}

TESSERA_OP_CASES(Math, math_rows());

}  // namespace
}  // namespace tessera::test

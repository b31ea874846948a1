// One-operand elementwise ops (exp log sqrt rsqrt tanh sin cos abs, unary minus) on tiles of rank
// 1 to 3 (picked at random), over each op's domain.
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

#define TESSERA_UNARY_OP(Name, text, dsl_expr, ref_expr, lo, hi) \
  struct Name {                                                  \
    static constexpr const char* name = text;                    \
    static constexpr double low = lo, high = hi;                 \
    template <Element T>                                         \
    static Tile<T> dsl(const Tile<T>& x) {                       \
      return dsl_expr;                                           \
    }                                                            \
    static double ref(double x) { return ref_expr; }             \
  };
TESSERA_UNARY_OP(Exp, "exp", exp(x), std::exp(x), -5, 5)
TESSERA_UNARY_OP(Log, "log", log(x), std::log(x), 0.01, 50)
TESSERA_UNARY_OP(Sqrt, "sqrt", sqrt(x), std::sqrt(x), 0, 50)
TESSERA_UNARY_OP(Rsqrt, "rsqrt", rsqrt(x), 1 / std::sqrt(x), 0.01, 50)
TESSERA_UNARY_OP(Tanh, "tanh", tanh(x), std::tanh(x), -4, 4)
TESSERA_UNARY_OP(Sin, "sin", sin(x), std::sin(x), -6.3, 6.3)
TESSERA_UNARY_OP(Cos, "cos", cos(x), std::cos(x), -6.3, 6.3)
TESSERA_UNARY_OP(Abs, "abs", abs(x), std::fabs(x), -1000, 1000)
TESSERA_UNARY_OP(Neg, "neg", -x, -x, -1000, 1000)
#undef TESSERA_UNARY_OP

template <class Op, Element T>
TESSERA_KERNEL(unary, Out<T> z, In<T> x) {
  z.store(Op::dsl(load_like(x, z)));
};

template <class Op, Element T>
void run_unary(Rng& rng) {
  const Shape tiles[] = {{64}, {8, 16}, {4, 4, 8}};
  const Shape& tile = tiles[rng.integer(0, 2)];
  Shape shape;
  for (int64_t t : tile) shape.push_back(rng.ragged(t, 3));
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, Op::low, Op::high);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  (void)unary<Op, T>(z.view().partition(tile), x.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return Op::ref(x.at(i)); }, default_rtol<T>());
}

template <class Op, Element... Ts>
void add_rows(std::vector<Case>& rows) {
  (rows.push_back({std::string(Op::name) + "_" + dtype_tag<Ts>(), run_unary<Op, Ts>}), ...);
}

std::vector<Case> unary_rows() {
  std::vector<Case> rows;
  add_rows<Exp, float, half, bfloat16, double>(rows);
  add_rows<Log, float, half, bfloat16, double>(rows);
  add_rows<Sqrt, float, half, bfloat16, double>(rows);
  add_rows<Rsqrt, float, half, bfloat16, double>(rows);
  add_rows<Tanh, float, half, bfloat16, double>(rows);
  add_rows<Sin, float, half, bfloat16, double>(rows);
  add_rows<Cos, float, half, bfloat16, double>(rows);
  add_rows<Abs, float, half, bfloat16, int32_t, int64_t, double>(rows);
  add_rows<Neg, float, half, bfloat16, int32_t, int64_t, double>(rows);
  return rows;
}

TESSERA_OP_CASES(Unary, unary_rows());

}  // namespace
}  // namespace tessera::test

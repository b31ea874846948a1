// Two-operand elementwise ops (+ - * / maximum minimum, comparisons, & |) in every operand form:
// tile-tile, tile-constant, constant-tile, tile-Scalar<T> parameter, and broadcasting of a row
// [1, N] and of a column [M, 1] against a tile. Comparisons are stored as i32 (cast from bool).
#include <algorithm>
#include <climits>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// ---- the ops -----------------------------------------------------------------------------------

// Inputs of an op: floats in [-4, 4], integers in [-50, 50]. The reference is templated on the
// value type: double for floats, int64_t for integers (then wrapped to the result's width).
struct TypicalInputs {
  template <Element T>
  static double x(Rng& r) {
    if constexpr (is_float_v<T>)
      return r.uniform(-4, 4);
    else
      return static_cast<double>(r.integer(-50, 50));
  }
  template <Element T>
  static double y(Rng& r) {
    return x<T>(r);
  }
};
// Divisors away from zero for floats; integers include 0 (integer division by zero gives 0).
struct DivisorInputs : TypicalInputs {
  template <Element T>
  static double y(Rng& r) {
    if constexpr (is_float_v<T>)
      return (r.coin() ? 1 : -1) * r.uniform(0.25, 4);
    else
      return static_cast<double>(r.integer(-9, 9));
  }
};
// Small integers in every dtype, so that equal operands are common.
struct TieInputs {
  template <Element T>
  static double x(Rng& r) {
    return static_cast<double>(r.integer(-3, 3));
  }
  template <Element T>
  static double y(Rng& r) {
    return x<T>(r);
  }
};
// Any i32: sums and products wrap around (two's complement), as on the GPU.
struct FullRangeInputs {
  template <Element T>
  static double x(Rng& r) {
    return static_cast<double>(r.integer(INT32_MIN, INT32_MAX));
  }
  template <Element T>
  static double y(Rng& r) {
    return x<T>(r);
  }
};

// The DSL expression and the reference are the same C++ expression, over tiles and over values.
#define TESSERA_ARITH_OP(Name, text, expr, Inputs)                 \
  struct Name : Inputs {                                           \
    static constexpr const char* name = text;                      \
    static constexpr bool compare = false;                         \
    static auto dsl(const auto& a, const auto& b) { return expr; } \
    template <class V>                                             \
    static V ref(V a, V b) {                                       \
      return expr;                                                 \
    }                                                              \
  };
TESSERA_ARITH_OP(Add, "add", a + b, TypicalInputs)
TESSERA_ARITH_OP(Sub, "sub", a - b, TypicalInputs)
TESSERA_ARITH_OP(Mul, "mul", a* b, TypicalInputs)
TESSERA_ARITH_OP(WrappingAdd, "wrapping_add", a + b, FullRangeInputs)
TESSERA_ARITH_OP(WrappingSub, "wrapping_sub", a - b, FullRangeInputs)
TESSERA_ARITH_OP(WrappingMul, "wrapping_mul", a* b, FullRangeInputs)
TESSERA_ARITH_OP(BitAnd, "bitand", a& b, FullRangeInputs)
TESSERA_ARITH_OP(BitOr, "bitor", a | b, FullRangeInputs)
#undef TESSERA_ARITH_OP

struct Div : DivisorInputs {
  static constexpr const char* name = "div";
  static constexpr bool compare = false;
  static auto dsl(const auto& a, const auto& b) { return a / b; }
  template <class V>
  static V ref(V a, V b) {
    if constexpr (std::is_integral_v<V>)
      return b == 0 ? 0 : a / b;  // C++ also truncates
    else
      return a / b;
  }
};

// maximum/minimum take a tile first; with a constant first, swap (both are commutative).
template <class A, class B>
auto max_of(const A& a, const B& b) {
  if constexpr (requires { a.shape(); })
    return maximum(a, b);
  else
    return maximum(b, a);
}
template <class A, class B>
auto min_of(const A& a, const B& b) {
  if constexpr (requires { a.shape(); })
    return minimum(a, b);
  else
    return minimum(b, a);
}
struct Max : TypicalInputs {
  static constexpr const char* name = "maximum";
  static constexpr bool compare = false;
  static auto dsl(const auto& a, const auto& b) { return max_of(a, b); }
  template <class V>
  static V ref(V a, V b) {
    return std::max(a, b);
  }
};
struct Min : TypicalInputs {
  static constexpr const char* name = "minimum";
  static constexpr bool compare = false;
  static auto dsl(const auto& a, const auto& b) { return min_of(a, b); }
  template <class V>
  static V ref(V a, V b) {
    return std::min(a, b);
  }
};

#define TESSERA_COMPARE_OP(Name, text, op)                           \
  struct Name : TieInputs {                                          \
    static constexpr const char* name = text;                        \
    static constexpr bool compare = true;                            \
    static auto dsl(const auto& a, const auto& b) { return a op b; } \
    template <class V>                                               \
    static V ref(V a, V b) {                                         \
      return static_cast<V>(a op b);                                 \
    }                                                                \
  };
TESSERA_COMPARE_OP(Eq, "eq", ==)
TESSERA_COMPARE_OP(Ne, "ne", !=)
TESSERA_COMPARE_OP(Lt, "lt", <)
TESSERA_COMPARE_OP(Le, "le", <=)
TESSERA_COMPARE_OP(Gt, "gt", >)
TESSERA_COMPARE_OP(Ge, "ge", >=)
#undef TESSERA_COMPARE_OP

// Boolean logic on comparison results: & | and !.
struct LogicAnd : TieInputs {
  static constexpr const char* name = "logical_and";
  static constexpr bool compare = true;
  static auto dsl(const auto& a, const auto& b) { return (a < b) & (a > b - 2); }
  template <class V>
  static V ref(V a, V b) {
    return static_cast<V>(a < b && a > b - 2);
  }
};
struct LogicOrNot : TieInputs {
  static constexpr const char* name = "logical_or_not";
  static constexpr bool compare = true;
  static auto dsl(const auto& a, const auto& b) { return (!(a == b)) | (a > b + 1); }
  template <class V>
  static V ref(V a, V b) {
    return static_cast<V>(!(a == b) || a > b + 1);
  }
};

// ---- kernels, one per operand form -------------------------------------------------------------

template <class Op, class T>
using out_t = std::conditional_t<Op::compare, int32_t, T>;

// Comparisons give bool tiles; they are stored as i32.
template <Element T>
auto stored(const Tile<T>& t) {
  if constexpr (std::is_same_v<T, bool>)
    return t.template cast<int32_t>();
  else
    return t;
}

constexpr int kConstant = 3;  // the C++ constant operand

template <class Op, Element T>
TESSERA_KERNEL(tile_tile, Out<out_t<Op, T>> z, In<T> x, In<T> y) {
  z.store(stored(Op::dsl(load_like(x, z), load_like(y, z))));
};
template <class Op, Element T>
TESSERA_KERNEL(tile_constant, Out<out_t<Op, T>> z, In<T> x) {
  z.store(stored(Op::dsl(load_like(x, z), T(kConstant))));
};
template <class Op, Element T>
TESSERA_KERNEL(constant_tile, Out<out_t<Op, T>> z, In<T> y) {
  z.store(stored(Op::dsl(T(kConstant), load_like(y, z))));
};
template <class Op, Element T>
TESSERA_KERNEL(tile_scalar, Out<out_t<Op, T>> z, In<T> x, Scalar<T> s) {
  z.store(stored(Op::dsl(load_like(x, z), s)));
};
// row: [1, N]; the tile [TM, TN] against its [1, TN] slice of the row.
template <class Op, Element T>
TESSERA_KERNEL(tile_row, Out<out_t<Op, T>> z, In<T> x, In<T> row) {
  const Tile<T> r = load(row, {0, tile_index(1)}, {1, z.shape()[1]});
  z.store(stored(Op::dsl(load_like(x, z), r)));
};
// col: [M, 1]; its [TM, 1] slice against the tile, on the left. (The right operand of every form
// comes from y, so divisors stay away from zero.)
template <class Op, Element T>
TESSERA_KERNEL(column_tile, Out<out_t<Op, T>> z, In<T> y, In<T> col) {
  const Tile<T> c = load(col, {tile_index(0), 0}, {z.shape()[0], 1});
  z.store(stored(Op::dsl(c, load_like(y, z))));
};

enum class Form { TileTile, TileConstant, ConstantTile, TileScalar, TileRow, ColumnTile };
constexpr Form kForms[] = {Form::TileTile,   Form::TileConstant, Form::ConstantTile,
                           Form::TileScalar, Form::TileRow,      Form::ColumnTile};
const char* form_name(Form f) {
  switch (f) {
    case Form::TileTile:
      return "tile_tile";
    case Form::TileConstant:
      return "tile_constant";
    case Form::ConstantTile:
      return "constant_tile";
    case Form::TileScalar:
      return "tile_scalar";
    case Form::TileRow:
      return "tile_row";
    case Form::ColumnTile:
      return "column_tile";
  }
  return "";
}

// The reference of one element, from the operands as stored (already rounded to T).
template <class Op, Element T>
double reference(double a, double b) {
  if constexpr (is_float_v<T>) {
    return Op::ref(a, b);
  } else {
    const int64_t r = Op::ref(static_cast<int64_t>(a), static_cast<int64_t>(b));
    return static_cast<double>(static_cast<T>(static_cast<uint64_t>(r)));  // wraps to T's width
  }
}

template <class Op, Element T>
void run_binary(Form form, Rng& rng) {
  using R = out_t<Op, T>;
  const Shape tile{8, 16};
  const Shape shape{rng.ragged(8, 4), rng.ragged(16, 3)};
  using Fill = typename Guarded<T>::Fill;
  Guarded<T> x(shape, Fill::Input), y(shape, Fill::Input);
  Guarded<T> row({1, shape[1]}, Fill::Input), col({shape[0], 1}, Fill::Input);
  x.fill([&](const Shape&) { return Op::template x<T>(rng); });
  y.fill([&](const Shape&) { return Op::template y<T>(rng); });
  row.fill([&](const Shape&) { return Op::template y<T>(rng); });
  col.fill([&](const Shape&) { return Op::template x<T>(rng); });
  const T s = from_double<T>(Op::template y<T>(rng));
  Guarded<R> z(shape, Guarded<R>::Fill::Output);

  IndexFn want;
  switch (form) {
    case Form::TileTile:
      (void)tile_tile<Op, T>(z.view().partition(tile), x.view(), y.view()).sync();
      want = [&](const Shape& i) { return reference<Op, T>(x.at(i), y.at(i)); };
      break;
    case Form::TileConstant:
      (void)tile_constant<Op, T>(z.view().partition(tile), x.view()).sync();
      want = [&](const Shape& i) { return reference<Op, T>(x.at(i), kConstant); };
      break;
    case Form::ConstantTile:
      (void)constant_tile<Op, T>(z.view().partition(tile), y.view()).sync();
      want = [&](const Shape& i) { return reference<Op, T>(kConstant, y.at(i)); };
      break;
    case Form::TileScalar:
      (void)tile_scalar<Op, T>(z.view().partition(tile), x.view(), s).sync();
      want = [&](const Shape& i) { return reference<Op, T>(x.at(i), to_double(s)); };
      break;
    case Form::TileRow:
      (void)tile_row<Op, T>(z.view().partition(tile), x.view(), row.view()).sync();
      want = [&](const Shape& i) { return reference<Op, T>(x.at(i), row.at({0, i[1]})); };
      break;
    case Form::ColumnTile:
      (void)column_tile<Op, T>(z.view().partition(tile), y.view(), col.view()).sync();
      want = [&](const Shape& i) { return reference<Op, T>(col.at({i[0], 0}), y.at(i)); };
      break;
  }
  expect_matches(z, want, default_rtol<R>());
}

template <class Op, Element... Ts>
void add_rows(std::vector<Case>& rows) {
  (
      [&] {
        for (Form f : kForms)
          rows.push_back({std::string(Op::name) + "_" + dtype_tag<Ts>() + "_" + form_name(f),
                          [f](Rng& rng) { run_binary<Op, Ts>(f, rng); }});
      }(),
      ...);
}

std::vector<Case> binary_rows() {
  std::vector<Case> rows;
  add_rows<Add, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Sub, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Mul, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Div, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Max, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Min, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<WrappingAdd, int32_t, int64_t>(rows);
  add_rows<WrappingSub, int32_t, int64_t>(rows);
  add_rows<WrappingMul, int32_t, int64_t>(rows);
  add_rows<BitAnd, int32_t, int64_t>(rows);
  add_rows<BitOr, int32_t, int64_t>(rows);
  add_rows<Eq, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Ne, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Lt, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Le, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Gt, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<Ge, float, half, bfloat16, int32_t, int8_t, int64_t, double>(rows);
  add_rows<LogicAnd, float, int32_t>(rows);
  add_rows<LogicOrNot, float, int32_t>(rows);
  return rows;
}

TESSERA_OP_CASES(Binary, binary_rows());

}  // namespace
}  // namespace tessera::test

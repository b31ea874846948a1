// The math ops of two and three operands: pow fmod copysign (floats; tile-tile, tile-constant and
// constant-tile), the integer ops % << >> ^ ~ (with divisors 0 and -1, and shift counts outside
// [0, width)), fma (against the exact a * b + c) and clamp (tile bounds, a row of bounds that
// broadcasts, constant bounds, and NaN operands).
#include <cmath>
#include <limits>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

constexpr double kConstant = 1.5;  // the plain-value operand of the float functions

// ---- pow, fmod, copysign -----------------------------------------------------------------------

struct Pow {
  static constexpr const char* name = "pow";
  static double x(Rng& r) { return r.uniform(0.1, 4); }
  static double y(Rng& r) { return r.uniform(-3, 3); }
  static auto dsl(const auto& a, const auto& b) { return pow(a, b); }
  static double ref(double a, double b) { return std::pow(a, b); }
};
struct Fmod {
  static constexpr const char* name = "fmod";
  static double x(Rng& r) { return r.uniform(-40, 40); }
  static double y(Rng& r) { return (r.coin() ? 1 : -1) * r.uniform(0.5, 6); }
  static auto dsl(const auto& a, const auto& b) { return fmod(a, b); }
  static double ref(double a, double b) { return std::fmod(a, b); }
};
struct Copysign {
  static constexpr const char* name = "copysign";
  static double x(Rng& r) { return r.uniform(-4, 4); }
  static double y(Rng& r) { return r.uniform(-4, 4); }
  static auto dsl(const auto& a, const auto& b) { return copysign(a, b); }
  static double ref(double a, double b) { return std::copysign(a, b); }
};

enum class Form { TileTile, TileConstant, ConstantTile };

template <class Op, Element T>
TESSERA_KERNEL(float_fn_tiles, Out<T> z, In<T> x, In<T> y) {
  z.store(Op::dsl(load_like(x, z), load_like(y, z)));
};
template <class Op, Element T>
TESSERA_KERNEL(float_fn_tile_constant, Out<T> z, In<T> x) {
  z.store(Op::dsl(load_like(x, z), T(kConstant)));
};
template <class Op, Element T>
TESSERA_KERNEL(float_fn_constant_tile, Out<T> z, In<T> y) {
  z.store(Op::dsl(T(kConstant), load_like(y, z)));
};

template <class Op, Element T>
void run_float_fn(Form form, Rng& rng) {
  const Shape tile{8, 16}, shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  Guarded<T> x(shape, Guarded<T>::Fill::Input), y(shape, Guarded<T>::Fill::Input);
  x.fill([&](const Shape&) { return Op::x(rng); });
  y.fill([&](const Shape&) { return Op::y(rng); });
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  IndexFn want;
  switch (form) {
    case Form::TileTile:
      (void)float_fn_tiles<Op, T>(z.view().partition(tile), x.view(), y.view()).sync();
      want = [&](const Shape& i) { return Op::ref(x.at(i), y.at(i)); };
      break;
    case Form::TileConstant:
      (void)float_fn_tile_constant<Op, T>(z.view().partition(tile), x.view()).sync();
      want = [&](const Shape& i) { return Op::ref(x.at(i), kConstant); };
      break;
    case Form::ConstantTile:
      (void)float_fn_constant_tile<Op, T>(z.view().partition(tile), y.view()).sync();
      want = [&](const Shape& i) { return Op::ref(kConstant, y.at(i)); };
      break;
  }
  // powf is within 2 ulps, so f32 gets two roundings' worth of tolerance.
  expect_matches(
      z, [&](const Shape& i) { return cast_reference<T>(want(i)); }, 2 * default_rtol<T>());
}

template <class Op, Element... Ts>
void add_float_fn_rows(std::vector<Case>& rows) {
  (
      [&] {
        const std::pair<Form, const char*> forms[] = {{Form::TileTile, "tile_tile"},
                                                      {Form::TileConstant, "tile_constant"},
                                                      {Form::ConstantTile, "constant_tile"}};
        for (const auto& [f, form_name] : forms)
          rows.push_back({std::string(Op::name) + "_" + dtype_tag<Ts>() + "_" + form_name,
                          [f](Rng& rng) { run_float_fn<Op, Ts>(f, rng); }});
      }(),
      ...);
}

// ---- integer ops -------------------------------------------------------------------------------

template <Element T>
constexpr int kWidth = static_cast<int>(sizeof(T)) * 8;

// The range integer inputs are drawn from: all of T, but only +-2^40 for i64, whose elements the
// harness reads back as doubles (exact to 2^53).
template <Element T>
int64_t int_low() {
  return sizeof(T) == 8 ? -(int64_t{1} << 40) : int64_t{std::numeric_limits<T>::min()};
}
template <Element T>
int64_t int_high() {
  return sizeof(T) == 8 ? int64_t{1} << 40 : int64_t{std::numeric_limits<T>::max()};
}

// Each reference follows docs/dsl.md, computed on int64 and wrapped to T.
template <Element T>
double wrap(int64_t v) {
  return static_cast<double>(static_cast<T>(static_cast<uint64_t>(v)));
}

struct Rem {
  static constexpr const char* name = "rem";
  template <Element T>
  static double y(Rng& r) {  // 0 and -1 included
    return static_cast<double>(r.integer(-9, 9));
  }
  static auto dsl(const auto& a, const auto& b) { return a % b; }
  template <Element T>
  static double ref(int64_t a, int64_t b) {
    return b == 0 ? wrap<T>(a) : b == -1 ? 0.0 : wrap<T>(a % b);
  }
};
struct Shl {
  static constexpr const char* name = "shl";
  template <Element T>
  static double y(Rng& r) {  // counts past both ends of [0, width)
    return static_cast<double>(r.integer(-3, kWidth<T> + 3));
  }
  static auto dsl(const auto& a, const auto& b) { return a << b; }
  template <Element T>
  static double ref(int64_t a, int64_t n) {
    if (n < 0 || n >= kWidth<T>) return 0;
    return wrap<T>(static_cast<int64_t>(static_cast<uint64_t>(a) << n));
  }
};
struct Shr {
  static constexpr const char* name = "shr";
  template <Element T>
  static double y(Rng& r) {
    return static_cast<double>(r.integer(-3, kWidth<T> + 3));
  }
  static auto dsl(const auto& a, const auto& b) { return a >> b; }
  template <Element T>
  static double ref(int64_t a, int64_t n) {
    if (n < 0 || n >= kWidth<T>) return a < 0 ? -1 : 0;
    return wrap<T>(a >> n);  // arithmetic: the sign fills
  }
};
struct Xor {
  static constexpr const char* name = "xor";
  template <Element T>
  static double y(Rng& r) {
    return static_cast<double>(r.integer(int_low<T>(), int_high<T>()));
  }
  static auto dsl(const auto& a, const auto& b) { return a ^ b; }
  template <Element T>
  static double ref(int64_t a, int64_t b) {
    return wrap<T>(a ^ b);
  }
};
// ~a ^ b: bitwise not, checked through a second operand so that both operand forms are used.
struct NotXor : Xor {
  static constexpr const char* name = "bitwise_not";
  static auto dsl(const auto& a, const auto& b) { return ~a ^ b; }
  template <Element T>
  static double ref(int64_t a, int64_t b) {
    return wrap<T>(~a ^ b);
  }
};

template <class Op, Element T>
TESSERA_KERNEL(int_tiles, Out<T> z, In<T> x, In<T> y) {
  z.store(Op::dsl(load_like(x, z), load_like(y, z)));
};
// The right operand a plain value (a shift by a constant count, a remainder by a constant).
template <class Op, Element T>
TESSERA_KERNEL(int_tile_constant, Out<T> z, In<T> x) {
  z.store(Op::dsl(load_like(x, z), T(3)));
};

template <class Op, Element T>
void run_int(bool constant, Rng& rng) {
  const Shape tile{8, 16}, shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  Guarded<T> x(shape, Guarded<T>::Fill::Input), y(shape, Guarded<T>::Fill::Input);
  x.fill(
      [&](const Shape&) { return static_cast<double>(rng.integer(int_low<T>(), int_high<T>())); });
  y.fill([&](const Shape&) { return Op::template y<T>(rng); });
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  auto as_int = [](double v) { return static_cast<int64_t>(v); };
  if (constant) {
    (void)int_tile_constant<Op, T>(z.view().partition(tile), x.view()).sync();
    expect_matches(
        z, [&](const Shape& i) { return Op::template ref<T>(as_int(x.at(i)), 3); }, 0);
  } else {
    (void)int_tiles<Op, T>(z.view().partition(tile), x.view(), y.view()).sync();
    expect_matches(
        z, [&](const Shape& i) { return Op::template ref<T>(as_int(x.at(i)), as_int(y.at(i))); },
        0);
  }
}

template <class Op, Element... Ts>
void add_int_rows(std::vector<Case>& rows) {
  (rows.push_back({std::string(Op::name) + "_" + dtype_tag<Ts>() + "_tile_tile",
                   [](Rng& rng) { run_int<Op, Ts>(false, rng); }}),
   ...);
  (rows.push_back({std::string(Op::name) + "_" + dtype_tag<Ts>() + "_tile_constant",
                   [](Rng& rng) { run_int<Op, Ts>(true, rng); }}),
   ...);
}

// ---- fma ---------------------------------------------------------------------------------------

template <Element T>
TESSERA_KERNEL(fma_kernel, Out<T> z, In<T> a, In<T> b, In<T> c) {
  z.store(fma(load_like(a, z), load_like(b, z), load_like(c, z)));
};

template <Element T>
void run_fma(Rng& rng) {
  const Shape tile{8, 16}, shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  using Fill = typename Guarded<T>::Fill;
  Guarded<T> a(shape, Fill::Input), b(shape, Fill::Input), c(shape, Fill::Input);
  for (Guarded<T>* g : {&a, &b, &c}) {
    if constexpr (is_float_v<T>)
      g->fill_uniform(rng, -4, 4);
    else
      g->fill_uniform(rng, static_cast<double>(int_low<T>()), static_cast<double>(int_high<T>()));
  }
  Guarded<T> z(shape, Fill::Output);
  (void)fma_kernel<T>(z.view().partition(tile), a.view(), b.view(), c.view()).sync();
  if constexpr (is_float_v<T>) {
    // a * b + c may cancel: one rounding's error relative to |a * b| + |c|. (For f32 and f16
    // the product is exact in double; the reference's own rounding is far below the tolerance.)
    expect_matches(
        z, [&](const Shape& i) { return std::fma(a.at(i), b.at(i), c.at(i)); }, default_rtol<T>(),
        [&](const Shape& i) {
          return std::fmax(std::fabs(a.at(i) * b.at(i)) + std::fabs(c.at(i)), 1e-3);
        });
  } else {
    expect_matches(
        z,
        [&](const Shape& i) {
          const auto v = [&](const Guarded<T>& g) {
            return static_cast<uint64_t>(static_cast<int64_t>(g.at(i)));
          };
          return wrap<T>(static_cast<int64_t>(v(a) * v(b) + v(c)));
        },
        0);
  }
}

// ---- clamp -------------------------------------------------------------------------------------

// Bounds as tiles, as a [1, TN] row of lower bounds against a constant upper bound, and as two
// constants. Floats: some elements of x are NaN.
enum class ClampForm { Tiles, RowAndConstant, Constants };
constexpr double kLow = -2, kHigh = 3;

template <Element T>
TESSERA_KERNEL(clamp_tiles, Out<T> z, In<T> x, In<T> lo, In<T> hi) {
  z.store(clamp(load_like(x, z), load_like(lo, z), load_like(hi, z)));
};
template <Element T>
TESSERA_KERNEL(clamp_row_constant, Out<T> z, In<T> x, In<T> row) {
  const Tile<T> lo = load(row, {0, tile_index(1)}, {1, z.shape()[1]});
  z.store(clamp(load_like(x, z), lo, Tile<T>::full({}, T(kHigh))));
};
template <Element T>
TESSERA_KERNEL(clamp_constants, Out<T> z, In<T> x) {
  z.store(clamp(load_like(x, z), T(kLow), T(kHigh)));
};

template <Element T>
void run_clamp(ClampForm form, Rng& rng) {
  const Shape tile{8, 16}, shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  using Fill = typename Guarded<T>::Fill;
  Guarded<T> x(shape, Fill::Input), lo(shape, Fill::Input), hi(shape, Fill::Input);
  Guarded<T> row({1, shape[1]}, Fill::Input);
  x.fill([&](const Shape&) {
    if (is_float_v<T> && rng.integer(0, 9) == 0) return static_cast<double>(NAN);
    return static_cast<double>(rng.integer(-6, 6));
  });
  lo.fill([&](const Shape&) { return static_cast<double>(rng.integer(-4, 0)); });
  hi.fill([&](const Shape&) { return static_cast<double>(rng.integer(0, 4)); });
  row.fill([&](const Shape&) { return static_cast<double>(rng.integer(-4, 0)); });
  Guarded<T> z(shape, Fill::Output);
  auto ref = [](double v, double l, double h) {
    return std::isnan(v) ? v : std::fmin(std::fmax(v, l), h);
  };
  IndexFn want;
  switch (form) {
    case ClampForm::Tiles:
      (void)clamp_tiles<T>(z.view().partition(tile), x.view(), lo.view(), hi.view()).sync();
      want = [&](const Shape& i) { return ref(x.at(i), lo.at(i), hi.at(i)); };
      break;
    case ClampForm::RowAndConstant:
      (void)clamp_row_constant<T>(z.view().partition(tile), x.view(), row.view()).sync();
      want = [&](const Shape& i) { return ref(x.at(i), row.at({0, i[1]}), kHigh); };
      break;
    case ClampForm::Constants:
      (void)clamp_constants<T>(z.view().partition(tile), x.view()).sync();
      want = [&](const Shape& i) { return ref(x.at(i), kLow, kHigh); };
      break;
  }
  expect_matches(z, want, 0);  // clamp returns one of its operands: exact
}

template <Element... Ts>
void add_clamp_rows(std::vector<Case>& rows) {
  const std::pair<ClampForm, const char*> forms[] = {{ClampForm::Tiles, "tiles"},
                                                     {ClampForm::RowAndConstant, "row_constant"},
                                                     {ClampForm::Constants, "constants"}};
  for (const auto& [f, form_name] : forms)
    (rows.push_back({std::string("clamp_") + dtype_tag<Ts>() + "_" + form_name,
                     [f](Rng& rng) { run_clamp<Ts>(f, rng); }}),
     ...);
}

std::vector<Case> math_binary_rows() {
  std::vector<Case> rows;
  add_float_fn_rows<Pow, float, half, bfloat16, double>(rows);
  add_float_fn_rows<Fmod, float, half, bfloat16, double>(rows);
  add_float_fn_rows<Copysign, float, half, bfloat16, double>(rows);
  add_int_rows<Rem, int32_t, int8_t, int64_t>(rows);
  add_int_rows<Shl, int32_t, int8_t, int64_t>(rows);
  add_int_rows<Shr, int32_t, int8_t, int64_t>(rows);
  add_int_rows<Xor, int32_t, int8_t, int64_t>(rows);
  add_int_rows<NotXor, int32_t, int8_t, int64_t>(rows);
  rows.push_back({"fma_f32", run_fma<float>});
  rows.push_back({"fma_f16", run_fma<half>});
  rows.push_back({"fma_bf16", run_fma<bfloat16>});
  rows.push_back({"fma_f64", run_fma<double>});
  rows.push_back({"fma_i32", run_fma<int32_t>});
  rows.push_back({"fma_i64", run_fma<int64_t>});
  add_clamp_rows<float, half, bfloat16, double, int32_t, int8_t>(rows);
  return rows;
}

TESSERA_OP_CASES(MathBinary, math_binary_rows());

}  // namespace
}  // namespace tessera::test

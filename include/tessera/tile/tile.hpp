// Tile values of the kernel DSL. A Tile<T> is a whole tile of T with a shape fixed at trace time
// (rank 0: a scalar). Operations on tiles record IR; nothing is computed while tracing. Every
// operation records the caller's source line, so errors point at the user's kernel.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <type_traits>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/tile/trace.hpp"

namespace tessera::tile {

// A value with the location of the call that produced it. Operators take their first operand as
// At<...> so that the implicit conversion, evaluated at the call site, records the user's line.
template <class V>
struct At {
  const V& value;
  SourceLoc loc;
  At(const V& v, std::source_location l = std::source_location::current())  // NOLINT
      : value(v), loc(l) {}
};

template <Element T>
class Tile;

using Index = Tile<int32_t>;  // tile coordinates, loop counters: i32 scalars

namespace detail {
template <class T>
Tile<T> wrap(ir::ValueId v);
}  // namespace detail

template <Element T>
class Tile : public detail::Traced {
 public:
  using element_type = T;

  Tile(const Tile& other, std::source_location l = std::source_location::current())
      : Traced(other, l) {}
  Tile(Tile&&) noexcept = default;
  Tile& operator=(const Tile&) = default;
  Tile& operator=(Tile&&) = default;
  ~Tile() = default;

  // The static shape (empty for a scalar) and rank.
  const Shape& shape() const { return type().shape; }
  int rank() const { return type().rank(); }

  // Tiles made from nothing. (Kernel-side; host tensors are made by tessera::zeros/full.)
  static Tile full(Shape shape, T value, std::source_location l = std::source_location::current()) {
    ir::Attrs a;
    a.dtype = dtype_v<T>;
    a.shape = std::move(shape);
    a.value = to_double(value);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      a.exact = static_cast<int64_t>(value);  // exact beyond 2^53, where the double is not
    return Tile(detail::emit(ir::OpKind::Constant, {}, a, l));
  }
  static Tile zeros(Shape shape, std::source_location l = std::source_location::current()) {
    return full(std::move(shape), T(0), l);
  }
  // Each element holds its index along `axis`.
  static Tile iota(Shape shape, int axis = -1,
                   std::source_location l = std::source_location::current()) {
    ir::Attrs a;
    a.dtype = dtype_v<T>;
    a.axis = axis < 0 ? static_cast<int>(shape.size()) + axis : axis;
    a.shape = std::move(shape);
    return Tile(detail::emit(ir::OpKind::Iota, {}, a, l));
  }

  Tile reshape(Shape shape, std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.shape = std::move(shape);
    return Tile(detail::emit(ir::OpKind::Reshape, {get(l)}, a, l));
  }
  Tile permute(std::vector<int64_t> order,
               std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.perm = std::move(order);
    return Tile(detail::emit(ir::OpKind::Permute, {get(l)}, a, l));
  }
  // Elements [start, start + length) along `axis` (negative: from the end), the other axes
  // whole: a half of a RoPE head, a window of a row. Static bounds, checked when traced.
  Tile slice(int axis, int64_t start, int64_t length,
             std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.axis = axis < 0 ? rank() + axis : axis;
    a.start = start;
    a.length = length;
    return Tile(detail::emit(ir::OpKind::Slice, {get(l)}, a, l));
  }
  // Swaps the last two axes.
  Tile transpose(std::source_location l = std::source_location::current()) const {
    std::vector<int64_t> order(static_cast<size_t>(rank()));
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    if (order.size() >= 2) std::swap(order[order.size() - 1], order[order.size() - 2]);
    return permute(std::move(order), l);
  }
  // numpy rules: missing leading axes are added, extent-1 axes stretched.
  Tile broadcast_to(const Shape& shape,
                    std::source_location l = std::source_location::current()) const {
    return Tile(detail::emit_broadcast_to(get(l), shape, l));
  }
  template <Element U>
  Tile<U> cast(std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.dtype = dtype_v<U>;
    return detail::wrap<U>(detail::emit(ir::OpKind::Cast, {get(l)}, a, l));
  }

  // Arithmetic and comparisons, with numpy-style broadcasting; a plain T operand is a scalar.
  //
  // Both tile operands are At<Tile>, never one At<Tile> and one const Tile&: C++20 also tries
  // `b == a` for `a == b` (and for `a != b`), and with mixed parameter types the written and the
  // reversed candidate each convert a different operand better, which the standard calls
  // ambiguous (g++ 13 and clang warn, and may one day reject). With the same conversion on both
  // sides the written candidate simply wins. The tile-scalar pair is symmetric for the same
  // reason: (At<Tile>, T) reversed is (T, At<Tile>) with the same conversions.
  // tests/tile/operators_test.cpp builds every operand mix with -Werror.
  //
  // The operands are read in two statements, so any local_load they need is traced in operand
  // order on every compiler (function arguments are evaluated in an unspecified order).
#define TESSERA_TILE_BINARY(op, kind, Result)                                       \
  friend Result operator op(At<Tile> a, At<Tile> b) {                               \
    const ir::ValueId lhs = a.value.get(a.loc);                                     \
    const ir::ValueId rhs = b.value.get(a.loc);                                     \
    return Result(detail::emit_binary(ir::OpKind::kind, lhs, rhs, a.loc));          \
  }                                                                                 \
  friend Result operator op(At<Tile> a, T b) {                                      \
    const ir::ValueId lhs = a.value.get(a.loc);                                     \
    const ir::ValueId rhs = constant(b, a.loc);                                     \
    return Result(detail::emit_binary(ir::OpKind::kind, lhs, rhs, a.loc));          \
  }                                                                                 \
  friend Result operator op(T a, At<Tile> b) {                                      \
    const ir::ValueId lhs = constant(a, b.loc);                                     \
    const ir::ValueId rhs = b.value.get(b.loc);                                     \
    return Result(detail::emit_binary(ir::OpKind::kind, lhs, rhs, b.loc));          \
  }
  TESSERA_TILE_BINARY(+, Add, Tile)
  TESSERA_TILE_BINARY(-, Sub, Tile)
  TESSERA_TILE_BINARY(*, Mul, Tile)
  TESSERA_TILE_BINARY(/, Div, Tile)
  TESSERA_TILE_BINARY(==, CmpEq, Tile<bool>)
  TESSERA_TILE_BINARY(!=, CmpNe, Tile<bool>)
  TESSERA_TILE_BINARY(<, CmpLt, Tile<bool>)
  TESSERA_TILE_BINARY(<=, CmpLe, Tile<bool>)
  TESSERA_TILE_BINARY(>, CmpGt, Tile<bool>)
  TESSERA_TILE_BINARY(>=, CmpGe, Tile<bool>)
  TESSERA_TILE_BINARY(&, And, Tile)
  TESSERA_TILE_BINARY(|, Or, Tile)
  TESSERA_TILE_BINARY(^, Xor, Tile)
  // Integers only (a KernelError names fmod for floats): remainder, and shifts.
  TESSERA_TILE_BINARY(%, Rem, Tile)
  TESSERA_TILE_BINARY(<<, Shl, Tile)
  TESSERA_TILE_BINARY(>>, Shr, Tile)
#undef TESSERA_TILE_BINARY

  friend Tile operator-(At<Tile> a) {
    return Tile(detail::emit(ir::OpKind::Neg, {a.value.get(a.loc)}, {}, a.loc));
  }
  friend Tile operator!(At<Tile> a) {
    return Tile(detail::emit(ir::OpKind::Not, {a.value.get(a.loc)}, {}, a.loc));
  }
  // Bitwise not of integers (logical not of bools); the IR's `not`.
  friend Tile operator~(At<Tile> a) {
    return Tile(detail::emit(ir::OpKind::Not, {a.value.get(a.loc)}, {}, a.loc));
  }
  // The right operand is an At<Tile>, so the location recorded is the user's `a += b`, not a
  // line in this header.
#define TESSERA_TILE_COMPOUND(op, kind)                                   \
  friend Tile& operator op(Tile& a, At<Tile> b) {                         \
    const ir::ValueId lhs = a.get(b.loc);                                 \
    const ir::ValueId rhs = b.value.get(b.loc);                           \
    a.set(detail::emit_binary(ir::OpKind::kind, lhs, rhs, b.loc), b.loc); \
    return a;                                                             \
  }
  TESSERA_TILE_COMPOUND(+=, Add)
  TESSERA_TILE_COMPOUND(-=, Sub)
  TESSERA_TILE_COMPOUND(*=, Mul)
  TESSERA_TILE_COMPOUND(/=, Div)
  TESSERA_TILE_COMPOUND(%=, Rem)
#undef TESSERA_TILE_COMPOUND

  // The SSA value at the current point of the trace (for library code that emits ops).
  ir::ValueId value(SourceLoc loc = {}) const { return get(loc); }

  explicit Tile(ir::ValueId v) : Traced(v) {}

 private:
  static double to_double(T v) {
    if constexpr (std::is_same_v<T, bool>) return v ? 1.0 : 0.0;
    else if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(v);
    else return static_cast<double>(static_cast<float>(v));  // half, bfloat16
  }
  // A C++ value next to a tile, as a constant of the tile's dtype; integers exactly.
  static ir::ValueId constant(T v, SourceLoc loc) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      return detail::emit_integer_constant(dtype_v<T>, static_cast<int64_t>(v), loc);
    else
      return detail::emit_constant(dtype_v<T>, to_double(v), loc);
  }
};

namespace detail {
template <class T>
Tile<T> wrap(ir::ValueId v) {
  return Tile<T>(v);
}
}  // namespace detail

// ---- free functions -----------------------------------------------------------------------

#define TESSERA_TILE_UNARY(name, kind)                                                   \
  template <Element T>                                                                   \
  Tile<T> name(const Tile<T>& x, std::source_location l = std::source_location::current()) { \
    return Tile<T>(detail::emit(ir::OpKind::kind, {x.value(l)}, {}, l));                \
  }
TESSERA_TILE_UNARY(exp, Exp)
TESSERA_TILE_UNARY(log, Log)
TESSERA_TILE_UNARY(sqrt, Sqrt)
TESSERA_TILE_UNARY(rsqrt, Rsqrt)
TESSERA_TILE_UNARY(tanh, Tanh)
TESSERA_TILE_UNARY(sin, Sin)
TESSERA_TILE_UNARY(cos, Cos)
TESSERA_TILE_UNARY(abs, Abs)
TESSERA_TILE_UNARY(exp2, Exp2)
TESSERA_TILE_UNARY(log2, Log2)
TESSERA_TILE_UNARY(log1p, Log1p)  // log(1 + x), accurate near x = 0
TESSERA_TILE_UNARY(expm1, Expm1)  // exp(x) - 1, accurate near x = 0
TESSERA_TILE_UNARY(erf, Erf)
TESSERA_TILE_UNARY(sigmoid, Sigmoid)  // 1 / (1 + exp(-x))
TESSERA_TILE_UNARY(floor, Floor)
TESSERA_TILE_UNARY(ceil, Ceil)
TESSERA_TILE_UNARY(round, Round)  // to nearest, ties to even (as torch.round, numpy.round)
TESSERA_TILE_UNARY(trunc, Trunc)
#undef TESSERA_TILE_UNARY

// Whether each element is NaN / infinite (floats).
template <Element T>
Tile<bool> isnan(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return Tile<bool>(detail::emit(ir::OpKind::IsNan, {x.value(l)}, {}, l));
}
template <Element T>
Tile<bool> isinf(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return Tile<bool>(detail::emit(ir::OpKind::IsInf, {x.value(l)}, {}, l));
}

// Two-operand float functions, broadcasting; either operand may be a plain value.
#define TESSERA_TILE_BINARY_FN(name, kind)                                     \
  template <Element T>                                                         \
  Tile<T> name(const Tile<T>& a, const Tile<T>& b,                             \
               std::source_location l = std::source_location::current()) {     \
    const ir::ValueId av = a.value(l), bv = b.value(l); /* in operand order */ \
    return Tile<T>(detail::emit_binary(ir::OpKind::kind, av, bv, l));          \
  }                                                                            \
  template <Element T>                                                         \
  Tile<T> name(const Tile<T>& a, std::type_identity_t<T> b,                    \
               std::source_location l = std::source_location::current()) {     \
    return name(a, Tile<T>::full({}, b, l), l);                                \
  }                                                                            \
  template <Element T>                                                         \
  Tile<T> name(std::type_identity_t<T> a, const Tile<T>& b,                    \
               std::source_location l = std::source_location::current()) {     \
    return name(Tile<T>::full({}, a, l), b, l);                                \
  }
TESSERA_TILE_BINARY_FN(pow, Pow)            // a ** b
TESSERA_TILE_BINARY_FN(fmod, Fmod)          // a - trunc(a / b) * b, exact; the sign of a
TESSERA_TILE_BINARY_FN(copysign, Copysign)  // |a| with the sign of b
#undef TESSERA_TILE_BINARY_FN

// a * b + c, rounded once (integers wrap); the three broadcast to one shape.
template <Element T>
Tile<T> fma(const Tile<T>& a, const Tile<T>& b, const Tile<T>& c,
            std::source_location l = std::source_location::current()) {
  const ir::ValueId av = a.value(l), bv = b.value(l), cv = c.value(l);
  return Tile<T>(detail::emit_ternary(ir::OpKind::Fma, av, bv, cv, l));
}
// min(max(x, lo), hi); NaN if any operand is NaN.
template <Element T>
Tile<T> clamp(const Tile<T>& x, const Tile<T>& lo, const Tile<T>& hi,
              std::source_location l = std::source_location::current()) {
  const ir::ValueId xv = x.value(l), lov = lo.value(l), hiv = hi.value(l);
  return Tile<T>(detail::emit_ternary(ir::OpKind::Clamp, xv, lov, hiv, l));
}
template <Element T>
Tile<T> clamp(const Tile<T>& x, std::type_identity_t<T> lo, std::type_identity_t<T> hi,
              std::source_location l = std::source_location::current()) {
  return clamp(x, Tile<T>::full({}, lo, l), Tile<T>::full({}, hi, l), l);
}

template <Element T>
Tile<T> maximum(const Tile<T>& a, const Tile<T>& b,
                std::source_location l = std::source_location::current()) {
  const ir::ValueId av = a.value(l), bv = b.value(l);  // in operand order
  return Tile<T>(detail::emit_binary(ir::OpKind::Max, av, bv, l));
}
template <Element T>
Tile<T> maximum(const Tile<T>& a, std::type_identity_t<T> b,
                std::source_location l = std::source_location::current()) {
  return maximum(a, Tile<T>::full({}, b, l), l);
}
template <Element T>
Tile<T> minimum(const Tile<T>& a, const Tile<T>& b,
                std::source_location l = std::source_location::current()) {
  const ir::ValueId av = a.value(l), bv = b.value(l);  // in operand order
  return Tile<T>(detail::emit_binary(ir::OpKind::Min, av, bv, l));
}
template <Element T>
Tile<T> minimum(const Tile<T>& a, std::type_identity_t<T> b,
                std::source_location l = std::source_location::current()) {
  return minimum(a, Tile<T>::full({}, b, l), l);
}

// a where cond, else b; the three are broadcast to one shape.
template <Element T>
Tile<T> select(const Tile<bool>& cond, const Tile<T>& a, const Tile<T>& b,
               std::source_location l = std::source_location::current()) {
  const ir::ValueId av = a.value(l), bv = b.value(l), cv = cond.value(l);
  return Tile<T>(detail::emit_select(cv, av, bv, l));
}
template <Element T>
Tile<T> select(const Tile<bool>& cond, const Tile<T>& a, std::type_identity_t<T> b,
               std::source_location l = std::source_location::current()) {
  return select(cond, a, Tile<T>::full({}, b, l), l);
}
template <Element T>
Tile<T> where(const Tile<bool>& cond, const Tile<T>& a, const Tile<T>& b,
              std::source_location l = std::source_location::current()) {
  return select(cond, a, b, l);
}

// The tiles one after another along `axis` (negative: from the end); they have one dtype and
// one shape on every other axis.
template <Element T>
Tile<T> concat(std::initializer_list<Tile<T>> tiles, int axis,
               std::source_location l = std::source_location::current()) {
  std::vector<ir::ValueId> vs;
  for (const Tile<T>& t : tiles) vs.push_back(t.value(l));  // in operand order
  ir::Attrs a;
  a.axis = axis < 0 && tiles.size() > 0 ? tiles.begin()->rank() + axis : axis;
  return Tile<T>(detail::emit(ir::OpKind::Concat, std::move(vs), a, l));
}

template <Element U, Element T>
Tile<U> cast(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return x.template cast<U>(l);
}
template <Element T>
Tile<T> broadcast(const Tile<T>& x, const Shape& shape,
                  std::source_location l = std::source_location::current()) {
  return x.broadcast_to(shape, l);
}
template <Element T>
Tile<T> reshape(const Tile<T>& x, Shape shape,
                std::source_location l = std::source_location::current()) {
  return x.reshape(std::move(shape), l);
}
template <Element T>
Tile<T> permute(const Tile<T>& x, std::vector<int64_t> order,
                std::source_location l = std::source_location::current()) {
  return x.permute(std::move(order), l);
}
template <Element T>
Tile<T> transpose(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return x.transpose(l);
}
template <Element T>
Tile<T> zeros_like(const Tile<T>& x, std::source_location l = std::source_location::current()) {
  return Tile<T>::zeros(x.shape(), l);
}
template <Element T>
Tile<T> full_like(const Tile<T>& x, T v, std::source_location l = std::source_location::current()) {
  return Tile<T>::full(x.shape(), v, l);
}
template <Element T>
Tile<T> iota(Shape shape, int axis = -1, std::source_location l = std::source_location::current()) {
  return Tile<T>::iota(std::move(shape), axis, l);
}

// Reductions along `axis` (negative counts from the end). The axis stays, with extent 1, so the
// result broadcasts back against its input: x - max(x, 1).
#define TESSERA_TILE_REDUCE(name, kind)                                                   \
  template <Element T>                                                                    \
  Tile<T> name(const Tile<T>& x, int axis,                                                \
               std::source_location l = std::source_location::current()) {                \
    ir::Attrs a;                                                                          \
    a.axis = axis < 0 ? x.rank() + axis : axis;                                           \
    return Tile<T>(detail::emit(ir::OpKind::kind, {x.value(l)}, a, l));                  \
  }
TESSERA_TILE_REDUCE(sum, ReduceSum)
TESSERA_TILE_REDUCE(max, ReduceMax)
TESSERA_TILE_REDUCE(min, ReduceMin)
TESSERA_TILE_REDUCE(prod, ReduceProd)
TESSERA_TILE_REDUCE(any, ReduceAny)  // of a Tile<bool>
TESSERA_TILE_REDUCE(all, ReduceAll)  // of a Tile<bool>
#undef TESSERA_TILE_REDUCE

// The index along `axis` (i32, the axis kept with extent 1) of the largest / smallest element:
// the first on ties, the first NaN if there is one.
#define TESSERA_TILE_ARG_REDUCE(name, kind)                                      \
  template <Element T>                                                           \
  Tile<int32_t> name(const Tile<T>& x, int axis,                                 \
                     std::source_location l = std::source_location::current()) { \
    ir::Attrs a;                                                                 \
    a.axis = axis < 0 ? x.rank() + axis : axis;                                  \
    return Tile<int32_t>(detail::emit(ir::OpKind::kind, {x.value(l)}, a, l));    \
  }
TESSERA_TILE_ARG_REDUCE(argmax, ArgMax)
TESSERA_TILE_ARG_REDUCE(argmin, ArgMin)
#undef TESSERA_TILE_ARG_REDUCE

// Whether element i of a scan covers elements 0..i (inclusive) or 0..i-1 (exclusive: element 0
// is the identity, 0 for cumsum and 1 for cumprod).
enum class Scan : uint8_t { inclusive, exclusive };

// Prefix sums / products along `axis` (negative counts from the end), of the input's shape.
#define TESSERA_TILE_SCAN(name, kind)                                      \
  template <Element T>                                                     \
  Tile<T> name(const Tile<T>& x, int axis, Scan scan = Scan::inclusive,    \
               std::source_location l = std::source_location::current()) { \
    ir::Attrs a;                                                           \
    a.axis = axis < 0 ? x.rank() + axis : axis;                            \
    a.exclusive = scan == Scan::exclusive;                                 \
    return Tile<T>(detail::emit(ir::OpKind::kind, {x.value(l)}, a, l));    \
  }
TESSERA_TILE_SCAN(cumsum, CumSum)
TESSERA_TILE_SCAN(cumprod, CumProd)
#undef TESSERA_TILE_SCAN

// Which end of a sort comes first.
enum class Order : uint8_t { ascending, descending };

// Each line along `axis` (negative counts from the end) sorted; argsort: the index along the axis
// of the element at each sorted position. Stable (equal elements keep their order); NaN counts as
// the largest value (last ascending, first descending).
template <Element T>
Tile<T> sort(const Tile<T>& x, int axis, Order order = Order::ascending,
             std::source_location l = std::source_location::current()) {
  ir::Attrs a;
  a.axis = axis < 0 ? x.rank() + axis : axis;
  a.descending = order == Order::descending;
  return Tile<T>(detail::emit(ir::OpKind::Sort, {x.value(l)}, a, l));
}
template <Element T>
Tile<int32_t> argsort(const Tile<T>& x, int axis, Order order = Order::ascending,
                      std::source_location l = std::source_location::current()) {
  ir::Attrs a;
  a.axis = axis < 0 ? x.rank() + axis : axis;
  a.descending = order == Order::descending;
  return Tile<int32_t>(detail::emit(ir::OpKind::ArgSort, {x.value(l)}, a, l));
}

// The k largest elements of each line along `axis`, largest first (ties: the first one first; NaN
// counts as the largest), and their indices along the axis.
template <Element T>
struct TopK {
  Tile<T> values;
  Tile<int32_t> indices;
};
template <Element T>
TopK<T> topk(const Tile<T>& x, int64_t k, int axis,
             std::source_location l = std::source_location::current()) {
  const int ax = axis < 0 ? x.rank() + axis : axis;
  return {sort(x, ax, Order::descending, l).slice(ax, 0, k, l),
          argsort(x, ax, Order::descending, l).slice(ax, 0, k, l)};
}

// a[M,K] @ b[K,N] + acc[M,N], accumulated in acc's type (tensor cores on the GPU).
template <Element A, Element C>
Tile<C> mma(const Tile<A>& a, const Tile<A>& b, const Tile<C>& acc,
            std::source_location l = std::source_location::current()) {
  return Tile<C>(detail::emit(ir::OpKind::Mma, {a.value(l), b.value(l), acc.value(l)}, {}, l));
}

// How an mma of f32 tiles may round its operands (docs/dsl.md, "Matrix multiply precision").
// exact: the products of the f32 values themselves (the default; CUDA cores on the GPU).
// tf32: each operand element rounded to TF32 first (10 fraction bits, as the tensor cores take
// them; relative error at most 2^-11 per element), then multiplied on tensor cores on the GPU.
enum class Precision : uint8_t { exact, tf32 };

// mma with an explicit operand precision: mma(a, b, acc, Precision::tf32) for f32 tiles.
template <Element A, Element C>
Tile<C> mma(const Tile<A>& a, const Tile<A>& b, const Tile<C>& acc, Precision precision,
            std::source_location l = std::source_location::current()) {
  static_assert(std::is_same_v<A, float> && std::is_same_v<C, float>,
                "mma(..., Precision): the operand precision applies to f32 tiles accumulated in "
                "f32; other types take mma(a, b, acc)");
  ir::Attrs attrs;
  attrs.tf32 = precision == Precision::tf32;
  return Tile<C>(detail::emit(ir::OpKind::Mma, {a.value(l), b.value(l), acc.value(l)}, attrs, l));
}

}  // namespace tessera::tile

// What to write instead, for the usual C++ mistakes in kernels (mixed dtypes, ...).
#include "tessera/tile/misuse.hpp"  // IWYU pragma: export

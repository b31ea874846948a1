// Overloads that exist only to say what to write instead. Without them, the C++ mistakes a new
// user makes in a kernel end in a list of every operator overload the compiler tried (some 80
// lines); with them, in one static_assert sentence at the user's line. Each is viable only for
// code that would not compile anyway (or, for a fractional constant next to an integer tile, that
// would compile into something the user did not mean), so no valid kernel changes meaning.
// tests/compile_fail pins each message, with a twin that compiles.
#pragma once

#include <type_traits>

#include "tessera/tile/tile.hpp"

namespace tessera::tile {

namespace detail {
template <class...>
inline constexpr bool misused = false;
}  // namespace detail

// Tiles of two element types in one binary op: Tessera converts no dtype implicitly (a silent
// f16 -> f32 or i64 -> i32 is a precision or range decision), so the user picks the cast. The
// compiler names A and B in the instantiation note beside the message.
#define TESSERA_MIXED_BINARY(op, Result)                                                   \
  template <Element A, Element B>                                                          \
    requires(!std::is_same_v<A, B>)                                                        \
  Result operator op(const Tile<A>&, const Tile<B>&) {                                     \
    static_assert(detail::misused<A, B>,                                                   \
                  "a binary op on tiles of two element types (the compiler names A and B " \
                  "beside this message): Tessera converts no dtype implicitly; cast one "  \
                  "operand to the other's type, e.g. a + cast<float>(b), or "              \
                  "cast<int32_t>(x.dim(0)) next to an Index");                             \
    return Result(ir::ValueId{});                                                          \
  }
TESSERA_MIXED_BINARY(+, Tile<A>)
TESSERA_MIXED_BINARY(-, Tile<A>)
TESSERA_MIXED_BINARY(*, Tile<A>)
TESSERA_MIXED_BINARY(/, Tile<A>)
TESSERA_MIXED_BINARY(==, Tile<bool>)
TESSERA_MIXED_BINARY(!=, Tile<bool>)
TESSERA_MIXED_BINARY(<, Tile<bool>)
TESSERA_MIXED_BINARY(<=, Tile<bool>)
TESSERA_MIXED_BINARY(>, Tile<bool>)
TESSERA_MIXED_BINARY(>=, Tile<bool>)
TESSERA_MIXED_BINARY(&, Tile<A>)
TESSERA_MIXED_BINARY(|, Tile<A>)
#undef TESSERA_MIXED_BINARY

#define TESSERA_MIXED_COMPOUND(op)                                                            \
  template <Element A, Element B>                                                             \
    requires(!std::is_same_v<A, B>)                                                           \
  Tile<A>& operator op(Tile<A>& a, const Tile<B>&) {                                          \
    static_assert(detail::misused<A, B>,                                                      \
                  "a compound assignment of a tile of another element type (A and B, named "  \
                  "below): Tessera converts no dtype implicitly; cast the right side to the " \
                  "left's type, e.g. acc += cast<float>(x)");                                 \
    return a;                                                                                 \
  }
TESSERA_MIXED_COMPOUND(+=)
TESSERA_MIXED_COMPOUND(-=)
TESSERA_MIXED_COMPOUND(*=)
TESSERA_MIXED_COMPOUND(/=)
#undef TESSERA_MIXED_COMPOUND

// A fractional C++ constant next to an integer tile would be converted to the tile's type first
// (Index * 0.5 is Index * 0): refused, since that is never what was meant.
#define TESSERA_FRACTION_ON_INTEGER(op)                                                          \
  template <Element T, class F>                                                                  \
    requires(std::is_integral_v<T> && std::is_floating_point_v<F>)                               \
  Tile<T> operator op(const Tile<T>&, F) {                                                       \
    static_assert(detail::misused<T, F>,                                                         \
                  "a floating-point constant next to an integer tile: it would be truncated to " \
                  "the tile's integer type (i * 0.5 is i * 0); cast the tile first, e.g. "       \
                  "cast<float>(i) * 0.5f, or write an integer constant");                        \
    return Tile<T>(ir::ValueId{});                                                               \
  }                                                                                              \
  template <Element T, class F>                                                                  \
    requires(std::is_integral_v<T> && std::is_floating_point_v<F>)                               \
  Tile<T> operator op(F, const Tile<T>&) {                                                       \
    static_assert(detail::misused<T, F>,                                                         \
                  "a floating-point constant next to an integer tile: it would be truncated to " \
                  "the tile's integer type (0.5 * i is 0 * i); cast the tile first, e.g. "       \
                  "0.5f * cast<float>(i), or write an integer constant");                        \
    return Tile<T>(ir::ValueId{});                                                               \
  }
TESSERA_FRACTION_ON_INTEGER(+)
TESSERA_FRACTION_ON_INTEGER(-)
TESSERA_FRACTION_ON_INTEGER(*)
TESSERA_FRACTION_ON_INTEGER(/)
#undef TESSERA_FRACTION_ON_INTEGER

}  // namespace tessera::tile

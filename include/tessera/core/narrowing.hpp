// Binding a host value to a kernel's scalar parameter without changing it. One rule, used by both
// launchers:
//  - the tile path binds a Scalar<T> from any arithmetic value and checks the value at launch
//    (narrowing<T>(v)): a value that T holds is accepted, one it would change is refused;
//  - the SIMT path accepts at compile time only the conversions that cannot narrow (Converts), and
//    checks here, at launch, the integer value its size relations compare (as a 64-bit index).
// A floating-point target rounds to nearest, as arithmetic does: 0.1 binds to a Scalar<float>.
// What it refuses is a finite value past its largest one, which would become an infinity.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "tessera/core/dtype.hpp"
#include "tessera/core/float8.hpp"
#include "tessera/core/half.hpp"

namespace tessera {

// P{a} is well-formed: converting an A to a P cannot narrow, whatever the value.
template <class P, class A>
concept Converts = requires(A a) {
  P{a};
};

// How binding a value to a type would change it.
enum class Narrowing {
  None,        // the value is kept
  OutOfRange,  // past the target's range (an integer's, or a floating-point type's largest)
  Fraction,    // a value with a fractional part, into an integer type
  NotFinite,   // NaN or an infinity, into an integer type
  NotABool,    // anything but 0 or 1, into bool
};

namespace detail {
template <class T>
inline constexpr bool is_float16 = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;
template <class T>
inline constexpr bool is_float8 = std::is_same_v<T, float8_e4m3> || std::is_same_v<T, float8_e5m2>;
// The host's storage float types, which convert through float.
template <class T>
inline constexpr bool is_narrow_float = is_float16<T> || is_float8<T>;

template <class To>
double as_double(To t) {
  if constexpr (is_narrow_float<To>)
    return static_cast<double>(static_cast<float>(t));
  else
    return static_cast<double>(t);
}
}  // namespace detail

// How binding `v` to a To would change it (Narrowing::None: it would not). To is an element type
// (bool, an integer, f16, bf16, f32, f64). A From that is not arithmetic (a user's class with a
// conversion operator) converts by its own rule, which is taken as it is.
template <class To, class From>
Narrowing narrowing(From v) {
  if constexpr (detail::is_narrow_float<From>) {
    return narrowing<To>(static_cast<float>(v));
  } else if constexpr (!std::is_arithmetic_v<From>) {
    return Narrowing::None;
  } else if constexpr (std::is_same_v<From, bool>) {
    return Narrowing::None;  // 0 or 1: every element type holds both
  } else if constexpr (std::is_same_v<To, bool>) {
    return v == From(0) || v == From(1) ? Narrowing::None : Narrowing::NotABool;
  } else if constexpr (std::is_integral_v<To>) {
    if constexpr (std::is_integral_v<From>) {
      // Widened first: std::in_range takes no character types.
      if constexpr (std::is_signed_v<From>)
        return std::in_range<To>(static_cast<long long>(v)) ? Narrowing::None
                                                            : Narrowing::OutOfRange;
      else
        return std::in_range<To>(static_cast<unsigned long long>(v)) ? Narrowing::None
                                                                     : Narrowing::OutOfRange;
    } else {
      const auto x = static_cast<long double>(v);
      if (!std::isfinite(x)) return Narrowing::NotFinite;
      if (std::trunc(x) != x) return Narrowing::Fraction;
      // [lo, hi): 2^digits is exact in a long double, so the bounds hold for 64-bit types too.
      const long double hi = std::ldexp(1.0L, std::numeric_limits<To>::digits);
      const long double lo = std::is_signed_v<To> ? -hi : 0.0L;
      return x >= lo && x < hi ? Narrowing::None : Narrowing::OutOfRange;
    }
  } else {
    const auto x = static_cast<long double>(v);
    // fp8 casts saturate infinities too (e4m3 has none): refused like any value past the range.
    if (detail::is_float8<To> && std::isinf(x)) return Narrowing::OutOfRange;
    if (!std::isfinite(x)) return Narrowing::None;  // NaN and infinities bind as they are
    // fp8 saturates instead of overflowing: refuse what would round past the largest finite value
    // (448 + 16 ties down to 448 in e4m3; 57344 + 4096 ties up, past it, in e5m2).
    if constexpr (std::is_same_v<To, float8_e4m3>) {
      if (std::fabs(x) > 464.0L) return Narrowing::OutOfRange;
    } else if constexpr (std::is_same_v<To, float8_e5m2>) {
      if (std::fabs(x) >= 61440.0L) return Narrowing::OutOfRange;
    }
    // Checked before converting: a finite value past the target's range converts to nothing
    // defined. (f16 and bf16 convert through f32, whose range covers theirs.)
    using Wide = std::conditional_t<std::is_same_v<To, double>, double, float>;
    if (std::fabs(x) > static_cast<long double>(std::numeric_limits<Wide>::max()))
      return Narrowing::OutOfRange;
    return std::isfinite(detail::as_double(static_cast<To>(static_cast<Wide>(x))))
               ? Narrowing::None
               : Narrowing::OutOfRange;
  }
}

// The value as a message shows it: integers in full, floating-point values in their shortest
// exact form (4294967296.5, 1e+300), bool as true / false.
std::string value_text(double v);
std::string value_text(long long v);
std::string value_text(unsigned long long v);
std::string value_text(bool v);
template <class From>
std::string value_text_of(From v) {
  if constexpr (detail::is_narrow_float<From>)
    return value_text(static_cast<double>(static_cast<float>(v)));
  else if constexpr (std::is_same_v<From, bool>)
    return value_text(v);
  else if constexpr (std::is_integral_v<From> && std::is_signed_v<From>)
    return value_text(static_cast<long long>(v));
  else if constexpr (std::is_integral_v<From>)
    return value_text(static_cast<unsigned long long>(v));
  else if constexpr (std::is_floating_point_v<From>)
    return value_text(static_cast<double>(v));
  else
    return "a value of a user type";
}

// Why binding a value to `to` would change it, as the end of a sentence that starts with the value:
// "does not fit an i32 (-2147483648 to 2147483647)", "has a fractional part, which an i32 cannot
// hold", ... `n` is not Narrowing::None.
std::string narrowing_reason(Narrowing n, DType to);

}  // namespace tessera

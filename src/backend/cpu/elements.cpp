#include "tessera/backend/cpu/elements.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <sstream>

namespace tessera::backend::cpu {
namespace {

constexpr Value kTwo63 = 9223372036854775808.0L;   // 2^63
constexpr Value kTwo64 = 18446744073709551616.0L;  // 2^64

// Truncates x to an integer and wraps it to I. x is exact (an integer of |x| <= 2^64 is held
// exactly), so the wrap is modulo 2^64 and then to the width, as two's complement hardware does.
template <class I>
Value wrap_int(Value x) {
  if (std::isnan(x)) return 0;
  Value t = std::trunc(x);
  int64_t i;
  if (t >= kTwo64 || t <= -kTwo64) {  // no integer op gets here: saturate, as constants do
    i = t > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  } else {
    if (t >= kTwo63)
      t -= kTwo64;
    else if (t < -kTwo63)
      t += kTwo64;
    i = static_cast<int64_t>(t);
  }
  return static_cast<Value>(static_cast<I>(static_cast<uint64_t>(i)));
}

// x as a float rounded to odd: an inexact result is truncated and gets its lowest bit set. A
// later rounding to f16 or bf16 (which keep 13 or 16 fewer bits) then gives the correctly rounded
// result; through a float rounded to nearest it could round twice (2^24 + 2^16 + 1 would become
// 2^24 + 2^16, a tie in bf16 that rounds down, where the exact value rounds up).
float to_float_round_odd(Value x) {
  if (std::isnan(x) || std::isinf(x)) return static_cast<float>(x);
  if (std::fabs(x) > std::numeric_limits<float>::max())  // odd already; rounds on to infinity
    return std::copysign(std::numeric_limits<float>::max(), static_cast<float>(x));
  float f = static_cast<float>(x);
  if (static_cast<Value>(f) == x) return f;
  if (std::fabs(static_cast<Value>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

}  // namespace

Value round_to(DType t, Value x) {
  switch (t) {
    case DType::Bool:
      return x != 0 ? 1.0 : 0.0;
    case DType::I8:
      return wrap_int<int8_t>(x);
    case DType::I16:
      return wrap_int<int16_t>(x);
    case DType::I32:
      return wrap_int<int32_t>(x);
    case DType::I64:
      return wrap_int<int64_t>(x);
    case DType::U8:
      return wrap_int<uint8_t>(x);
    case DType::F16:
      return static_cast<float>(half(to_float_round_odd(x)));
    case DType::BF16:
      return static_cast<float>(bfloat16(to_float_round_odd(x)));
    case DType::F32:
      return static_cast<float>(x);
    case DType::F64:
      return static_cast<double>(x);
    // Through a float rounded to odd, like f16: fp8 keeps far fewer bits, so this rounds once.
    case DType::F8E4M3:
      return static_cast<float>(float8_e4m3(to_float_round_odd(x)));
    case DType::F8E5M2:
      return static_cast<float>(float8_e5m2(to_float_round_odd(x)));
  }
  return x;
}

Value constant_to(DType t, double x) {
  if (!is_int(t) || std::isnan(x)) return round_to(t, x);
  const double tr = std::trunc(x);
  const int64_t i = tr >= 9.2233720368547758e18    ? std::numeric_limits<int64_t>::max()
                    : tr <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                                   : static_cast<int64_t>(tr);
  return round_to(t, static_cast<Value>(i));
}

Value convert(DType from, DType to, Value x) {
  (void)from;
  if (is_int(to) && is_float(from)) {
    // Float to integer saturates (as the GPU's cvt.rzi.sat does); NaN becomes 0.
    if (std::isnan(x)) return 0;
    Value lo = -kTwo63, hi = kTwo63 - 1;  // i64
    if (to == DType::I8) lo = -128, hi = 127;
    if (to == DType::I16) lo = -32768, hi = 32767;
    if (to == DType::I32) lo = -2147483648.0, hi = 2147483647.0;
    if (to == DType::U8) lo = 0, hi = 255;
    return round_to(to, std::fmin(std::fmax(std::trunc(x), lo), hi));
  }
  return round_to(to, x);
}

Value read_element(const void* base, DType t, int64_t offset) {
  switch (t) {
    case DType::Bool:
      return static_cast<const bool*>(base)[offset] ? 1 : 0;
    case DType::I8:
      return static_cast<const int8_t*>(base)[offset];
    case DType::I16:
      return static_cast<const int16_t*>(base)[offset];
    case DType::I32:
      return static_cast<const int32_t*>(base)[offset];
    case DType::I64:
      return static_cast<Value>(static_cast<const int64_t*>(base)[offset]);
    case DType::U8:
      return static_cast<const uint8_t*>(base)[offset];
    case DType::F16:
      return static_cast<float>(static_cast<const half*>(base)[offset]);
    case DType::BF16:
      return static_cast<float>(static_cast<const bfloat16*>(base)[offset]);
    case DType::F32:
      return static_cast<const float*>(base)[offset];
    case DType::F64:
      return static_cast<const double*>(base)[offset];
    case DType::F8E4M3:
      return static_cast<float>(static_cast<const float8_e4m3*>(base)[offset]);
    case DType::F8E5M2:
      return static_cast<float>(static_cast<const float8_e5m2*>(base)[offset]);
  }
  return 0;
}

void write_element(void* base, DType t, int64_t offset, Value x) {
  switch (t) {
    case DType::Bool:
      static_cast<bool*>(base)[offset] = x != 0;
      return;
    case DType::I8:
      static_cast<int8_t*>(base)[offset] = static_cast<int8_t>(x);
      return;
    case DType::I16:
      static_cast<int16_t*>(base)[offset] = static_cast<int16_t>(x);
      return;
    case DType::I32:
      static_cast<int32_t*>(base)[offset] = static_cast<int32_t>(x);
      return;
    case DType::I64:
      static_cast<int64_t*>(base)[offset] = static_cast<int64_t>(x);
      return;
    case DType::U8:
      static_cast<uint8_t*>(base)[offset] = static_cast<uint8_t>(x);
      return;
    case DType::F16:
      static_cast<half*>(base)[offset] = half(static_cast<float>(x));
      return;
    case DType::BF16:
      static_cast<bfloat16*>(base)[offset] = bfloat16(static_cast<float>(x));
      return;
    case DType::F32:
      static_cast<float*>(base)[offset] = static_cast<float>(x);
      return;
    case DType::F64:
      static_cast<double*>(base)[offset] = static_cast<double>(x);
      return;
    case DType::F8E4M3:
      static_cast<float8_e4m3*>(base)[offset] = float8_e4m3(static_cast<float>(x));
      return;
    case DType::F8E5M2:
      static_cast<float8_e5m2*>(base)[offset] = float8_e5m2(static_cast<float>(x));
      return;
  }
}

std::string format_element(DType t, Value x) {
  if (t == DType::Bool) return x != 0 ? "true" : "false";
  std::ostringstream os;
  if (is_int(t))
    os << static_cast<int64_t>(x);
  else
    os << static_cast<double>(x);
  return os.str();
}

}  // namespace tessera::backend::cpu

#include "tessera/backend/cpu/elements.hpp"

#include <bit>
#include <cmath>
#include <limits>
#include <sstream>

namespace tessera::backend::cpu {
namespace {

template <class I>
double wrap_int(double x) {
  if (std::isnan(x)) return 0;
  // Truncate toward zero, saturate to int64, then wrap to the width (two's complement).
  const double t = std::trunc(x);
  const int64_t i = t >= 9.2233720368547758e18   ? std::numeric_limits<int64_t>::max()
                    : t <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                                  : static_cast<int64_t>(t);
  return static_cast<double>(static_cast<I>(static_cast<uint64_t>(i)));
}

// x as a float rounded to odd: an inexact result is truncated and gets its lowest bit set. A
// later rounding to f16 or bf16 (which keep 13 or 16 fewer bits) then gives the correctly rounded
// result; through a float rounded to nearest it could round twice (2^24 + 2^16 + 1 would become
// 2^24 + 2^16, a tie in bf16 that rounds down, where the exact value rounds up).
float to_float_round_odd(double x) {
  if (std::isnan(x) || std::isinf(x)) return static_cast<float>(x);
  if (std::fabs(x) > std::numeric_limits<float>::max())  // odd already; rounds on to infinity
    return std::copysign(std::numeric_limits<float>::max(), static_cast<float>(x));
  float f = static_cast<float>(x);
  if (static_cast<double>(f) == x) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
}

}  // namespace

double round_to(DType t, double x) {
  switch (t) {
    case DType::Bool: return x != 0 ? 1.0 : 0.0;
    case DType::I8: return wrap_int<int8_t>(x);
    case DType::I16: return wrap_int<int16_t>(x);
    case DType::I32: return wrap_int<int32_t>(x);
    case DType::I64: return wrap_int<int64_t>(x);
    case DType::U8: return wrap_int<uint8_t>(x);
    case DType::F16: return static_cast<float>(half(to_float_round_odd(x)));
    case DType::BF16: return static_cast<float>(bfloat16(to_float_round_odd(x)));
    case DType::F32: return static_cast<float>(x);
    case DType::F64: return x;
  }
  return x;
}

double convert(DType from, DType to, double x) {
  (void)from;
  if (is_int(to) && is_float(from)) {
    // Float to integer saturates (as the GPU's cvt.rzi.sat does); NaN becomes 0.
    if (std::isnan(x)) return 0;
    double lo = -9.2233720368547758e18, hi = 9.2233720368547758e18;  // i64
    if (to == DType::I8) lo = -128, hi = 127;
    if (to == DType::I16) lo = -32768, hi = 32767;
    if (to == DType::I32) lo = -2147483648.0, hi = 2147483647.0;
    if (to == DType::U8) lo = 0, hi = 255;
    return round_to(to, std::fmin(std::fmax(std::trunc(x), lo), hi));
  }
  return round_to(to, x);
}

double read_element(const void* base, DType t, int64_t offset) {
  switch (t) {
    case DType::Bool: return static_cast<const bool*>(base)[offset] ? 1 : 0;
    case DType::I8: return static_cast<const int8_t*>(base)[offset];
    case DType::I16: return static_cast<const int16_t*>(base)[offset];
    case DType::I32: return static_cast<const int32_t*>(base)[offset];
    case DType::I64: return static_cast<double>(static_cast<const int64_t*>(base)[offset]);
    case DType::U8: return static_cast<const uint8_t*>(base)[offset];
    case DType::F16: return static_cast<float>(static_cast<const half*>(base)[offset]);
    case DType::BF16: return static_cast<float>(static_cast<const bfloat16*>(base)[offset]);
    case DType::F32: return static_cast<const float*>(base)[offset];
    case DType::F64: return static_cast<const double*>(base)[offset];
  }
  return 0;
}

void write_element(void* base, DType t, int64_t offset, double x) {
  switch (t) {
    case DType::Bool: static_cast<bool*>(base)[offset] = x != 0; return;
    case DType::I8: static_cast<int8_t*>(base)[offset] = static_cast<int8_t>(x); return;
    case DType::I16: static_cast<int16_t*>(base)[offset] = static_cast<int16_t>(x); return;
    case DType::I32: static_cast<int32_t*>(base)[offset] = static_cast<int32_t>(x); return;
    case DType::I64: static_cast<int64_t*>(base)[offset] = static_cast<int64_t>(x); return;
    case DType::U8: static_cast<uint8_t*>(base)[offset] = static_cast<uint8_t>(x); return;
    case DType::F16: static_cast<half*>(base)[offset] = half(static_cast<float>(x)); return;
    case DType::BF16: static_cast<bfloat16*>(base)[offset] = bfloat16(static_cast<float>(x)); return;
    case DType::F32: static_cast<float*>(base)[offset] = static_cast<float>(x); return;
    case DType::F64: static_cast<double*>(base)[offset] = x; return;
  }
}

std::string format_element(DType t, double x) {
  if (t == DType::Bool) return x != 0 ? "true" : "false";
  std::ostringstream os;
  if (is_int(t)) os << static_cast<int64_t>(x);
  else os << x;
  return os.str();
}

}  // namespace tessera::backend::cpu

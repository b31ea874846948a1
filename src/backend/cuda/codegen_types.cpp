// C spellings of element types, literals and conversions, with the CPU backend's semantics
// (src/backend/cpu/elements.cpp): integer results wrap, float -> integer casts saturate.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {
namespace {

// Floats held in float registers and rounded to their type (f16, bf16 and the fp8 types), by the
// name the device runtime (device/tessera_scalar.cuh) gives them in its conversions and roundings
// (tsr_f16_to_f32, tsr_f32_to_e4m3, tsr_round_bf16, ...); empty for every other type.
std::string_view narrow_float_name(DType t) {
  switch (t) {
    case DType::F16:
      return "f16";
    case DType::BF16:
      return "bf16";
    case DType::F8E4M3:
      return "e4m3";
    case DType::F8E5M2:
      return "e5m2";
    case DType::Bool:
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U8:
    case DType::F32:
    case DType::F64:
      return "";
  }
  return "";
}

bool is_narrow_float(DType t) {
  return !narrow_float_name(t).empty();
}

// What the CPU backend's round_to does to an integer: truncate, saturate to int64, then wrap.
int64_t wrap_integer(DType t, double x) {
  if (std::isnan(x)) return 0;
  const double tr = std::trunc(x);
  const int64_t i = tr >= 9.2233720368547758e18    ? std::numeric_limits<int64_t>::max()
                    : tr <= -9.2233720368547758e18 ? std::numeric_limits<int64_t>::min()
                                                   : static_cast<int64_t>(tr);
  const uint64_t u = static_cast<uint64_t>(i);
  switch (t) {
    case DType::I8:
      return static_cast<int8_t>(u);
    case DType::I16:
      return static_cast<int16_t>(u);
    case DType::I32:
      return static_cast<int32_t>(u);
    case DType::U8:
      return static_cast<uint8_t>(u);
    case DType::I64:
      return i;
    case DType::Bool:
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64:
    case DType::F8E4M3:
    case DType::F8E5M2:
      break;
  }
  return i;
}

std::string float_literal(double v, bool single) {
  if (std::isnan(v)) return single ? "tsr_nan_f32()" : "tsr_nan_f64()";
  if (std::isinf(v)) {
    const std::string inf = single ? "tsr_inf_f32()" : "tsr_inf_f64()";
    return v < 0 ? "(-" + inf + ")" : inf;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

}  // namespace

std::string str(int64_t v) {
  return std::to_string(v);
}

std::string reg_type(DType t) {
  switch (t) {
    case DType::Bool:
      return "bool";
    case DType::I8:
      return "signed char";
    case DType::I16:
      return "short";
    case DType::I32:
      return "int";
    case DType::I64:
      return "long long";
    case DType::U8:
      return "unsigned char";
    case DType::F16:
      return "float";
    case DType::BF16:
      return "float";
    case DType::F32:
      return "float";
    case DType::F64:
      return "double";
    case DType::F8E4M3:
    case DType::F8E5M2:
      return "float";
  }
  return "?";
}

std::string storage_type(DType t) {
  switch (t) {
    case DType::Bool:
      return "unsigned char";
    case DType::F16:
      return "unsigned short";
    case DType::BF16:
      return "unsigned short";
    case DType::F8E4M3:
    case DType::F8E5M2:
      return "unsigned char";
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::I64:
    case DType::U8:
    case DType::F32:
    case DType::F64:
      return reg_type(t);
  }
  return "?";
}

std::string acc_type(DType t) {
  switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F8E4M3:
    case DType::F8E5M2:
      return "float";
    case DType::F64:
      return "double";
    case DType::I64:
      return "long long";
    case DType::Bool:
    case DType::I8:
    case DType::I16:
    case DType::I32:
    case DType::U8:
      return "int";
  }
  return "?";
}

int64_t acc_bytes(const std::string& ctype) {
  return ctype == "double" || ctype == "long long" ? 8 : 4;
}

std::string integer_literal(DType t, int64_t i) {
  const uint64_t u = static_cast<uint64_t>(i);
  switch (t) {
    case DType::I8:
      return str(static_cast<int64_t>(static_cast<int8_t>(u)));
    case DType::I16:
      return str(static_cast<int64_t>(static_cast<int16_t>(u)));
    case DType::U8:
      return str(static_cast<int64_t>(static_cast<uint8_t>(u)));
    case DType::I32: {
      const int32_t w = static_cast<int32_t>(u);
      return w == std::numeric_limits<int32_t>::min() ? "(-2147483647 - 1)"
                                                      : str(static_cast<int64_t>(w));
    }
    case DType::I64:
      return i == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807LL - 1)"
                                                      : str(i) + "LL";
    case DType::Bool:
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64:
    case DType::F8E4M3:
    case DType::F8E5M2:
      break;
  }
  TESSERA_INTERNAL_CHECK(false, "integer_literal of a non-integer dtype");
  return "";
}

std::string literal(DType t, double v) {
  switch (t) {
    case DType::Bool:
      return v != 0 ? "true" : "false";
    case DType::I8:
    case DType::I16:
    case DType::U8:
    case DType::I32:
    case DType::I64:
      return integer_literal(t, wrap_integer(DType::I64, v));
    case DType::F16:
    case DType::BF16:
    case DType::F8E4M3:
    case DType::F8E5M2: {
      // Exact values (0, 1, 0.5, ...) are plain literals; others round on the device, correctly
      // from the double, as the CPU backend rounds them.
      const float f = static_cast<float>(v);
      const double back = t == DType::F16      ? static_cast<float>(half(f))
                          : t == DType::BF16   ? static_cast<float>(bfloat16(f))
                          : t == DType::F8E4M3 ? static_cast<float>(float8_e4m3(f))
                                               : static_cast<float>(float8_e5m2(f));
      if (back == v || std::isnan(v)) return float_literal(v, true);
      return round_to(t, "tsr_odd_f32(" + float_literal(v, false) + ")");
    }
    case DType::F32:
      return float_literal(static_cast<float>(v), true);
    case DType::F64:
      return float_literal(v, false);
  }
  return "?";
}

std::string cast_literal(DType t, double v) {
  if (!is_int(t)) return literal(t, v);
  // Float to integer saturates; NaN becomes 0 (the CPU backend's convert).
  if (std::isnan(v)) return literal(t, 0);
  const double lo = t == DType::I8    ? -128.0
                    : t == DType::I16 ? -32768.0
                    : t == DType::I32 ? -2147483648.0
                    : t == DType::U8  ? 0.0
                                      : -9.2233720368547758e18;
  const double hi = t == DType::I8    ? 127.0
                    : t == DType::I16 ? 32767.0
                    : t == DType::I32 ? 2147483647.0
                    : t == DType::U8  ? 255.0
                                      : 9.2233720368547758e18;
  return literal(t, std::fmin(std::fmax(std::trunc(v), lo), hi));
}

std::string from_storage(DType t, const std::string& s) {
  if (t == DType::Bool) return "(" + s + " != 0)";
  const std::string_view n = narrow_float_name(t);
  return n.empty() ? s : "tsr_" + std::string(n) + "_to_f32(" + s + ")";
}

std::string to_storage(DType t, const std::string& r) {
  if (t == DType::Bool) return "(unsigned char)(" + r + " ? 1 : 0)";
  const std::string_view n = narrow_float_name(t);
  return n.empty() ? r : "tsr_f32_to_" + std::string(n) + "(" + r + ")";
}

std::string round_to(DType t, const std::string& expr) {
  const std::string_view n = narrow_float_name(t);
  return n.empty() ? expr : "tsr_round_" + std::string(n) + "(" + expr + ")";
}

std::string cast(DType from, DType to, const std::string& x, bool round) {
  if (from == to) return x;
  if (to == DType::Bool) return "(" + x + " != 0)";
  if (from == DType::Bool) return "(" + reg_type(to) + ")(" + x + " ? 1 : 0)";
  if (is_int(to)) {
    if (is_int(from)) return "(" + reg_type(to) + ")(" + x + ")";  // wraps
    const std::string d = "(double)(" + x + ")";
    switch (to) {
      case DType::I8:
        return "(signed char)tsr_f2i(" + d + ", -128.0, 127.0)";
      case DType::I16:
        return "(short)tsr_f2i(" + d + ", -32768.0, 32767.0)";
      case DType::I32:
        return "(int)tsr_f2i(" + d + ", -2147483648.0, 2147483647.0)";
      case DType::U8:
        return "(unsigned char)tsr_f2i(" + d + ", 0.0, 255.0)";
      case DType::I64:
        return "tsr_f2i64(" + d + ")";
      case DType::Bool:
      case DType::F16:
      case DType::BF16:
      case DType::F32:
      case DType::F64:
      case DType::F8E4M3:
      case DType::F8E5M2:
        break;
    }
    return x;
  }
  // To a float type, as the CPU backend converts: through double (an i64 rounds there first),
  // then correctly rounded to the type, which for f16/bf16 from anything wider than float means
  // through a float rounded to odd.
  if (to == DType::F64) return "(double)(" + x + ")";
  const bool wide = from == DType::F64 || is_int(from);
  if (is_narrow_float(to)) {
    const std::string f = wide ? "tsr_odd_f32((double)(" + x + "))" : x;
    return round ? round_to(to, f) : f;
  }
  if (from == DType::I64) return "(float)(double)(" + x + ")";
  return wide ? "(float)(" + x + ")" : x;  // to f32
}

}  // namespace tessera::backend::cuda::detail

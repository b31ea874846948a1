#include "tessera/core/narrowing.hpp"

#include <charconv>

#include "tessera/core/error.hpp"

namespace tessera {

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // the shortest form that reads back
  return std::string(buf, r.ptr);
}
std::string value_text(long long v) {
  return std::to_string(v);
}
std::string value_text(unsigned long long v) {
  return std::to_string(v);
}
std::string value_text(bool v) {
  return v ? "true" : "false";
}

namespace {

// "an i32 (-2147483648 to 2147483647)": the type and what it holds.
std::string type_and_range(DType to) {
  switch (to) {
    case DType::Bool:
      return "a bool (0 or 1)";
    case DType::I8:
      return "an i8 (-128 to 127)";
    case DType::I16:
      return "an i16 (-32768 to 32767)";
    case DType::I32:
      return "an i32 (-2147483648 to 2147483647)";
    case DType::I64:
      return "an i64 (-9223372036854775808 to 9223372036854775807)";
    case DType::U8:
      return "a u8 (0 to 255)";
    case DType::F16:
      return "an f16 (largest finite value 65504)";
    case DType::BF16:
      return "a bf16 (largest finite value about 3.39e+38)";
    case DType::F32:
      return "an f32 (largest finite value about 3.40e+38)";
    case DType::F64:
      return "an f64";
    case DType::F8E4M3:
      return "an f8e4m3 (largest finite value 448)";
    case DType::F8E5M2:
      return "an f8e5m2 (largest finite value 57344)";
  }
  return "?";
}

// "an i32": the article and the type's name.
std::string type_name(DType to) {
  const std::string name(dtype_name(to));
  const bool an = name[0] == 'i' || name[0] == 'f';  // "an i32", "an f16"; "a u8", "a bf16"
  return (an ? "an " : "a ") + name;
}

}  // namespace

std::string narrowing_reason(Narrowing n, DType to) {
  switch (n) {
    case Narrowing::OutOfRange:
      return "does not fit " + type_and_range(to);
    case Narrowing::Fraction:
      return "has a fractional part, which " + type_name(to) + " cannot hold";
    case Narrowing::NotFinite:
      return "is not a finite number, which " + type_name(to) + " cannot hold";
    case Narrowing::NotABool:
      return "is neither 0 nor 1, the only values of a bool";
    case Narrowing::None:
      break;
  }
  TESSERA_INTERNAL_CHECK(false, "narrowing_reason() of a value that fits");
}

}  // namespace tessera

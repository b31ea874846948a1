// 8-bit floating-point types (OCP FP8), 8 bits on the host too, so a Tensor<float8_e4m3> has the
// same bytes on the CPU and the GPU. They are storage types: kernels cast them to f16/f32 to
// compute, and cast results back.
//
//   f8e4m3 (float8_e4m3): 1 sign, 4 exponent (bias 7), 3 mantissa bits; the OCP "fn" variant:
//     no infinities, largest finite 448, NaN = S.1111.111 (0x7f / 0xff), smallest subnormal 2^-9.
//   f8e5m2 (float8_e5m2): 1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like: the top byte
//     of a binary16, with infinities (0x7c / 0xfc), NaNs, largest finite 57344.
//
// Conversion from float rounds to nearest even and saturates to the largest finite value, as
// CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, ...) and the sm_89+ instruction
// cvt.rn.satfinite.{e4m3,e5m2}x2.f32 do: a magnitude that would round past the largest finite
// value, infinity included, becomes +-max (so e5m2's infinities are never produced by a
// conversion, only read); NaN becomes the NaN 0x7f (sign dropped); the sign of a zero or an
// underflow to zero is kept. Conversion to float is exact.
#pragma once

#include <bit>
#include <cstdint>
#include <iosfwd>

namespace tessera {

namespace detail {

// float -> fp8 with M mantissa bits and exponent bias B; `max_code` the largest finite code.
template <unsigned M, int B, uint32_t MaxCode>
constexpr uint8_t float_to_fp8_bits(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x7f;                                   // NaN, sign dropped
  if (abs == 0x7f800000u) return static_cast<uint8_t>(sign | MaxCode);  // saturate infinity
  const int biased = static_cast<int>(abs >> 23);
  if (biased == 0) return static_cast<uint8_t>(sign);  // zero or f32 subnormal: far below 2^-17
  const uint32_t m = (abs & 0x7fffffu) | 0x800000u;    // value = m * 2^(biased - 150)
  const int e = biased - 127;
  const int ec = e < 1 - B ? 1 - B : e;  // below the smallest normal: fixed subnormal quantum
  const int shift = (ec - static_cast<int>(M)) - (biased - 150);  // bits of m dropped, >= 20
  if (shift > 25) return static_cast<uint8_t>(sign);              // under half the quantum
  uint32_t r = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (r & 1u))) ++r;  // round to nearest, ties to even
  // r holds the implicit bit (2^M) for normals, so adding it carries into the exponent; a
  // subnormal (ec + B - 1 = 0) that rounds up to 2^M becomes the smallest normal the same way.
  uint32_t code = (static_cast<uint32_t>(ec + B - 1) << M) + r;
  if (code > MaxCode) code = MaxCode;
  return static_cast<uint8_t>(sign | code);
}

constexpr uint8_t float_to_e4m3_bits(float f) {
  return float_to_fp8_bits<3, 7, 0x7e>(f);
}
constexpr uint8_t float_to_e5m2_bits(float f) {
  return float_to_fp8_bits<2, 15, 0x7b>(f);
}

constexpr float e4m3_bits_to_float(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exp = (b >> 3) & 0xfu, mant = b & 0x7u;
  if (exp == 0xfu && mant == 0x7u) return std::bit_cast<float>(sign | 0x7fc00000u);  // NaN
  if (exp == 0) {  // zero or subnormal: mant * 2^-9, exact in float
    const float v = static_cast<float>(mant) * (1.0f / 512.0f);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 120u) << 23) | (mant << 20));
}

constexpr float e5m2_bits_to_float(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t exp = (b >> 2) & 0x1fu, mant = b & 0x3u;
  if (exp == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 21));  // inf/NaN
  if (exp == 0) {  // zero or subnormal: mant * 2^-16
    const float v = static_cast<float>(mant) * (1.0f / 65536.0f);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 21));
}

}  // namespace detail

// OCP FP8 E4M3 ("fn": finite, NaN only at S.1111.111).
struct float8_e4m3 {
  uint8_t bits = 0;
  float8_e4m3() = default;
  constexpr float8_e4m3(float f) : bits(detail::float_to_e4m3_bits(f)) {}        // NOLINT: implicit
  constexpr float8_e4m3(double d) : float8_e4m3(static_cast<float>(d)) {}        // NOLINT
  constexpr float8_e4m3(int i) : float8_e4m3(static_cast<float>(i)) {}           // NOLINT
  constexpr operator float() const { return detail::e4m3_bits_to_float(bits); }  // NOLINT
  static constexpr float8_e4m3 from_bits(uint8_t b) {
    float8_e4m3 h;
    h.bits = b;
    return h;
  }
};

// OCP FP8 E5M2 (IEEE-like: infinities and NaNs).
struct float8_e5m2 {
  uint8_t bits = 0;
  float8_e5m2() = default;
  constexpr float8_e5m2(float f) : bits(detail::float_to_e5m2_bits(f)) {}        // NOLINT: implicit
  constexpr float8_e5m2(double d) : float8_e5m2(static_cast<float>(d)) {}        // NOLINT
  constexpr float8_e5m2(int i) : float8_e5m2(static_cast<float>(i)) {}           // NOLINT
  constexpr operator float() const { return detail::e5m2_bits_to_float(bits); }  // NOLINT
  static constexpr float8_e5m2 from_bits(uint8_t b) {
    float8_e5m2 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(float8_e4m3) == 1 && sizeof(float8_e5m2) == 1);

std::ostream& operator<<(std::ostream& os, float8_e4m3 h);
std::ostream& operator<<(std::ostream& os, float8_e5m2 h);

}  // namespace tessera

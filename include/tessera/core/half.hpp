// 16-bit floating-point types that are 16 bits on the host too, so a Tensor<half> has the same
// bytes on the CPU and the GPU. Conversions round to nearest even, as the hardware does.
#pragma once

#include <bit>
#include <cstdint>
#include <iosfwd>

namespace tessera {

namespace detail {
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);

constexpr uint16_t float_to_bf16_bits(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
constexpr float bf16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}
}  // namespace detail

// IEEE binary16.
struct half {
  uint16_t bits = 0;
  half() = default;
  half(float f) : bits(detail::float_to_half_bits(f)) {}  // NOLINT: implicit, like a builtin
  half(double d) : half(static_cast<float>(d)) {}          // NOLINT
  half(int i) : half(static_cast<float>(i)) {}             // NOLINT
  operator float() const { return detail::half_bits_to_float(bits); }  // NOLINT
  static half from_bits(uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
};

// bfloat16: the top half of a binary32.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  constexpr bfloat16(float f) : bits(detail::float_to_bf16_bits(f)) {}  // NOLINT
  constexpr bfloat16(double d) : bfloat16(static_cast<float>(d)) {}     // NOLINT
  constexpr bfloat16(int i) : bfloat16(static_cast<float>(i)) {}        // NOLINT
  constexpr operator float() const { return detail::bf16_bits_to_float(bits); }  // NOLINT
  static constexpr bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);

std::ostream& operator<<(std::ostream& os, half h);
std::ostream& operator<<(std::ostream& os, bfloat16 h);

}  // namespace tessera

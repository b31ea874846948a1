// half and bfloat16: conversions from float round to nearest even, as the GPU's cvt.rn does, and
// every 16-bit pattern survives a round trip through float.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "tessera/core/half.hpp"

namespace tessera {
namespace {

uint16_t h(float f) {
  return half(f).bits;
}
uint16_t b(float f) {
  return bfloat16(f).bits;
}
float from_h(uint16_t bits) {
  return static_cast<float>(half::from_bits(bits));
}
float from_b(uint16_t bits) {
  return static_cast<float>(bfloat16::from_bits(bits));
}
float f32(uint32_t bits) {
  return std::bit_cast<float>(bits);
}

bool is_half_nan(uint16_t bits) {
  return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
}
bool is_bf16_nan(uint16_t bits) {
  return (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0;
}

// The value of a binary16 pattern, computed from the IEEE definition with ldexp (independently of
// the bit manipulation under test).
double half_value(uint16_t bits) {
  const int sign = bits >> 15, exp = (bits >> 10) & 0x1f, mant = bits & 0x3ff;
  double v = exp == 0 ? std::ldexp(mant, -24) : std::ldexp(1024 + mant, exp - 25);
  if (exp == 0x1f) v = mant ? std::numeric_limits<double>::quiet_NaN() : INFINITY;
  return sign ? -v : v;
}

TEST(Half, ConvertsExactNormals) {
  EXPECT_EQ(h(0.0f), 0x0000);
  EXPECT_EQ(h(-0.0f), 0x8000);
  EXPECT_EQ(h(1.0f), 0x3c00);
  EXPECT_EQ(h(-2.0f), 0xc000);
  EXPECT_EQ(h(0.5f), 0x3800);
  EXPECT_EQ(h(1.5f), 0x3e00);
  EXPECT_EQ(h(65504.0f), 0x7bff);               // the largest finite half
  EXPECT_EQ(h(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(from_h(0x3c00), 1.0f);
  EXPECT_EQ(from_h(0x7bff), 65504.0f);
  EXPECT_EQ(from_h(0xc000), -2.0f);
}

TEST(Half, RoundsToNearestEvenOnTies) {
  const float ulp = std::ldexp(1.0f, -10);                       // spacing of halves in [1, 2)
  EXPECT_EQ(h(1.0f + ulp / 2), 0x3c00);                          // tie: down to even 0x3c00
  EXPECT_EQ(h(1.0f + 3 * ulp / 2), 0x3c02);                      // tie: up to even 0x3c02
  EXPECT_EQ(h(1.0f + ulp / 2 + std::ldexp(1.0f, -20)), 0x3c01);  // just above the tie: up
  EXPECT_EQ(h(1.0f + ulp / 2 - std::ldexp(1.0f, -20)), 0x3c00);  // just below the tie: down
  EXPECT_EQ(h(-(1.0f + 3 * ulp / 2)), 0xbc02);
  // A carry out of the mantissa bumps the exponent: 2 - ulp/4 rounds to 2.
  EXPECT_EQ(h(2.0f - ulp / 4), 0x4000);
}

TEST(Half, ConvertsSubnormalsWithRounding) {
  const float tiny = std::ldexp(1.0f, -24);  // the smallest subnormal half
  EXPECT_EQ(h(tiny), 0x0001);
  EXPECT_EQ(h(std::ldexp(1.0f, -15)), 0x0200);
  EXPECT_EQ(h(0x3ff * tiny), 0x03ff);  // the largest subnormal
  EXPECT_EQ(h(tiny / 2), 0x0000);      // tie between 0 and the smallest: to even (0)
  EXPECT_EQ(h(tiny * 0.75f), 0x0001);  // above the tie
  EXPECT_EQ(h(tiny * 0.25f), 0x0000);
  EXPECT_EQ(h(tiny * 1.5f), 0x0002);  // tie between 1 and 2 ulps: to even (2)
  EXPECT_EQ(h(tiny * 2.5f), 0x0002);  // tie between 2 and 3 ulps: to even (2)
  EXPECT_EQ(h(-tiny * 2.5f), 0x8002);
  EXPECT_EQ(h(std::ldexp(1.0f, -40)), 0x0000);
  EXPECT_EQ(h(-std::ldexp(1.0f, -40)), 0x8000);  // underflow keeps the sign
  // The largest subnormal plus half an ulp is a tie that rounds up to the smallest normal.
  EXPECT_EQ(h(0x3ff * tiny + tiny / 2), 0x0400);
  EXPECT_EQ(from_h(0x0001), tiny);
  EXPECT_EQ(from_h(0x8003), -3 * tiny);
  EXPECT_EQ(from_h(0x03ff), 0x3ff * tiny);
}

TEST(Half, OverflowsToInfinity) {
  EXPECT_EQ(h(65519.0f), 0x7bff);  // below the midpoint between 65504 and 65536: stays finite
  EXPECT_EQ(h(65520.0f), 0x7c00);  // the midpoint ties to even, which is the infinity pattern
  EXPECT_EQ(h(1e10f), 0x7c00);
  EXPECT_EQ(h(-1e10f), 0xfc00);
  EXPECT_EQ(h(INFINITY), 0x7c00);
  EXPECT_EQ(h(-INFINITY), 0xfc00);
  EXPECT_EQ(from_h(0x7c00), INFINITY);
  EXPECT_EQ(from_h(0xfc00), -INFINITY);
}

TEST(Half, KeepsNaNANaN) {
  EXPECT_TRUE(is_half_nan(h(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(is_half_nan(h(-std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload lives only in the low float mantissa bits must not become infinity.
  EXPECT_TRUE(is_half_nan(h(f32(0x7f800001u))));
  EXPECT_TRUE(std::isnan(from_h(0x7e00)));
  EXPECT_TRUE(std::isnan(from_h(0x7c01)));
  EXPECT_TRUE(std::isnan(from_h(0xffff)));
}

TEST(Half, EveryBitPatternRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto p = static_cast<uint16_t>(bits);
    const float f = from_h(p);
    if (is_half_nan(p)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << bits;
      ASSERT_TRUE(is_half_nan(h(f))) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), half_value(p)) << std::hex << bits;
    ASSERT_EQ(h(f), p) << std::hex << bits;
  }
}

// Float to half against a reference that knows nothing of bit tricks: the nearest of all finite
// halves (ties to the even mantissa), or infinity from the midpoint above the largest finite.
TEST(Half, MatchesANearestValueReferenceOverAMillionFloats) {
  std::vector<double> halves;  // every non-negative finite half, ascending
  for (uint16_t p = 0; p < 0x7c00; ++p) halves.push_back(half_value(p));
  auto reference = [&](float x) -> uint16_t {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(static_cast<double>(x));
    if (a >= 65520.0) return sign | 0x7c00;
    const auto hi = std::lower_bound(halves.begin(), halves.end(), a);
    if (hi == halves.begin()) return sign;
    const auto lo = hi - 1;
    if (hi == halves.end()) return sign | static_cast<uint16_t>(lo - halves.begin());
    const double dlo = a - *lo, dhi = *hi - a;
    size_t pick = static_cast<size_t>((dlo < dhi ? lo : hi) - halves.begin());
    if (dlo == dhi)
      pick = static_cast<size_t>(lo - halves.begin()) % 2 == 0
                 ? static_cast<size_t>(lo - halves.begin())
                 : static_cast<size_t>(hi - halves.begin());
    return sign | static_cast<uint16_t>(pick);
  };
  int checked = 0;
  // A stride coprime with 2 visits every exponent and many mantissa tails, ties included below.
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4099, ++checked) {
    const float x = f32(static_cast<uint32_t>(u));
    if (std::isnan(x)) continue;
    ASSERT_EQ(h(x), reference(x)) << std::hex << u;
  }
  // Every tie in [1, 2) and in the subnormal range.
  for (uint16_t m = 0; m < 0x3ff; ++m) {
    const float tie =
        static_cast<float>((half_value(0x3c00 | m) + half_value(0x3c00 | (m + 1))) / 2);
    ASSERT_EQ(h(tie), reference(tie)) << m;
    const float sub = static_cast<float>((half_value(m) + half_value(m + 1)) / 2);
    ASSERT_EQ(h(sub), reference(sub)) << m;
  }
  EXPECT_GT(checked, 1000000);
}

TEST(Half, PrintsAsItsFloatValue) {
  std::ostringstream os;
  os << half(1.5f) << " " << bfloat16(-2.0f);
  EXPECT_EQ(os.str(), "1.5 -2");
}

TEST(BFloat16, ConvertsExactValues) {
  EXPECT_EQ(b(1.0f), 0x3f80);
  EXPECT_EQ(b(-2.0f), 0xc000);
  EXPECT_EQ(b(0.0f), 0x0000);
  EXPECT_EQ(b(-0.0f), 0x8000);
  EXPECT_EQ(from_b(0x3f80), 1.0f);
  EXPECT_EQ(from_b(0x4049), f32(0x40490000u));
  static_assert(bfloat16(1.0f).bits == 0x3f80, "bfloat16 converts at compile time");
}

TEST(BFloat16, RoundsToNearestEvenOnTies) {
  EXPECT_EQ(b(f32(0x3f808000u)), 0x3f80);  // tie: down to even
  EXPECT_EQ(b(f32(0x3f818000u)), 0x3f82);  // tie: up to even
  EXPECT_EQ(b(f32(0x3f808001u)), 0x3f81);  // above the tie
  EXPECT_EQ(b(f32(0x3f807fffu)), 0x3f80);  // below the tie
  EXPECT_EQ(b(f32(0xbf818000u)), 0xbf82);
  EXPECT_EQ(b(f32(0x3fffffffu)), 0x4000);  // carries into the exponent
}

TEST(BFloat16, RoundsSubnormalsAndOverflowsToInfinity) {
  EXPECT_EQ(b(f32(0x00008000u)), 0x0000);  // subnormal tie: to even
  EXPECT_EQ(b(f32(0x00018000u)), 0x0002);
  EXPECT_EQ(b(f32(0x00010001u)), 0x0001);
  EXPECT_EQ(b(std::numeric_limits<float>::max()), 0x7f80);  // above the last midpoint
  EXPECT_EQ(b(f32(0x7f7f7fffu)), 0x7f7f);                   // below it: the largest finite
  EXPECT_EQ(b(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(b(INFINITY), 0x7f80);
  EXPECT_EQ(b(-INFINITY), 0xff80);
}

TEST(BFloat16, KeepsNaNANaN) {
  EXPECT_TRUE(is_bf16_nan(b(std::numeric_limits<float>::quiet_NaN())));
  // Truncating 0x7f800001 would give the infinity pattern; the conversion quiets it instead.
  EXPECT_TRUE(is_bf16_nan(b(f32(0x7f800001u))));
  EXPECT_TRUE(is_bf16_nan(b(f32(0xff800001u))));
  EXPECT_TRUE(std::isnan(from_b(0x7fc0)));
}

TEST(BFloat16, EveryBitPatternRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto p = static_cast<uint16_t>(bits);
    const float f = from_b(p);
    ASSERT_EQ(std::bit_cast<uint32_t>(f), bits << 16) << std::hex << bits;
    if (is_bf16_nan(p)) {
      ASSERT_TRUE(is_bf16_nan(b(f))) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(b(f), p) << std::hex << bits;
  }
}

}  // namespace
}  // namespace tessera

// float8_e4m3 and float8_e5m2: every one of the 256 codes of each format decodes to the value
// the OCP FP8 definition gives (computed here in double with ldexp, independently of the
// library's bit manipulation), and conversion from float is round-to-nearest-even with
// saturation to the largest finite value, checked against a brute-force nearest-value search over
// the decoded codes: exhaustively on every code, every midpoint between neighbours (ties), values
// just either side of them, and millions of random floats.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/float8.hpp"

namespace tessera {
namespace {

// A format as the OCP FP8 specification states it.
struct Format {
  const char* name;
  int exp_bits, mant_bits, bias;
  bool ieee;  // e5m2: all-ones exponent is inf (mantissa 0) or NaN; e4m3fn: only S.1111.111 NaN
  double max_finite;
};
constexpr Format kE4M3{"e4m3", 4, 3, 7, false, 448.0};
constexpr Format kE5M2{"e5m2", 5, 2, 15, true, 57344.0};

// The value of `code` from the definition: (-1)^s * 2^(e - bias) * (1 + m / 2^M) for normals,
// 2^(1 - bias) * (m / 2^M) for subnormals.
double decode(const Format& f, unsigned code) {
  const int s = (code >> 7) & 1;
  const unsigned e = (code >> f.mant_bits) & ((1u << f.exp_bits) - 1);
  const unsigned m = code & ((1u << f.mant_bits) - 1);
  const unsigned e_max = (1u << f.exp_bits) - 1, m_max = (1u << f.mant_bits) - 1;
  const double sign = s ? -1.0 : 1.0;
  if (f.ieee && e == e_max)
    return m == 0 ? sign * std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  if (!f.ieee && e == e_max && m == m_max) return std::numeric_limits<double>::quiet_NaN();
  const double frac = static_cast<double>(m) / static_cast<double>(1u << f.mant_bits);
  if (e == 0) return sign * std::ldexp(frac, 1 - f.bias);
  return sign * std::ldexp(1.0 + frac, static_cast<int>(e) - f.bias);
}

float lib_decode(const Format& f, uint8_t code) {
  return f.ieee ? static_cast<float>(float8_e5m2::from_bits(code))
                : static_cast<float>(float8_e4m3::from_bits(code));
}
uint8_t lib_encode(const Format& f, float x) {
  return f.ieee ? float8_e5m2(x).bits : float8_e4m3(x).bits;
}

// The finite non-negative codes in increasing order (code order is value order for them).
std::vector<unsigned> finite_positive(const Format& f) {
  std::vector<unsigned> codes;
  for (unsigned c = 0; c < 0x80; ++c)
    if (std::isfinite(decode(f, c))) codes.push_back(c);
  return codes;
}

// The reference conversion: the nearest finite value (ties: the code with an even mantissa, i.e.
// even code), anything at or past the largest finite value saturating to it, NaN -> 0x7f, the
// sign kept on zero.
struct Reference {
  const Format& f;
  std::vector<unsigned> codes = finite_positive(f);
  std::vector<double> values;  // decode(f, codes[i])
  explicit Reference(const Format& fmt) : f(fmt) {
    for (unsigned c : codes) values.push_back(decode(f, c));
  }
  uint8_t encode(double x) const {
    if (std::isnan(x)) return 0x7f;
    const unsigned sign = std::signbit(x) ? 0x80u : 0u;
    const double a = std::fabs(x);
    if (a >= f.max_finite) return static_cast<uint8_t>(sign | codes.back());
    // The first value >= a; a lies between its predecessor and it.
    const size_t i =
        static_cast<size_t>(std::lower_bound(values.begin(), values.end(), a) - values.begin());
    if (values[i] == a || i == 0) return static_cast<uint8_t>(sign | codes[i]);
    const double dlo = a - values[i - 1], dhi = values[i] - a;
    const unsigned pick = dlo < dhi   ? codes[i - 1]
                          : dhi < dlo ? codes[i]
                                      : (codes[i - 1] % 2 == 0 ? codes[i - 1] : codes[i]);
    return static_cast<uint8_t>(sign | pick);
  }
};

std::string hex(unsigned v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

class Float8 : public ::testing::TestWithParam<Format> {};

TEST_P(Float8, EveryCodeDecodesToItsDefinedValue) {
  const Format& f = GetParam();
  for (unsigned c = 0; c < 256; ++c) {
    const double want = decode(f, c);
    const float got = lib_decode(f, static_cast<uint8_t>(c));
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << f.name << " code " << hex(c);
    } else {
      EXPECT_EQ(static_cast<double>(got), want) << f.name << " code " << hex(c);
      EXPECT_EQ(std::signbit(got), std::signbit(want)) << f.name << " code " << hex(c);
    }
  }
}

TEST_P(Float8, EveryFiniteCodeSurvivesARoundTripAndNaNBecomes0x7f) {
  const Format& f = GetParam();
  for (unsigned c = 0; c < 256; ++c) {
    const double v = decode(f, c);
    const uint8_t back = lib_encode(f, static_cast<float>(v));
    if (std::isnan(v))
      EXPECT_EQ(back, 0x7f) << f.name << " NaN code " << hex(c);
    else if (std::isinf(v))  // e5m2's infinities saturate (SATFINITE)
      EXPECT_EQ(back, v > 0 ? 0x7b : 0xfb) << f.name << " infinity " << hex(c);
    else
      EXPECT_EQ(back, c) << f.name << " code " << hex(c) << " = " << v;
  }
}

TEST_P(Float8, MidpointsRoundToEvenAndNeighboursToTheNearest) {
  const Format& f = GetParam();
  const std::vector<unsigned> codes = finite_positive(f);
  int ties = 0;
  for (size_t i = 0; i + 1 < codes.size(); ++i) {
    for (double sign : {1.0, -1.0}) {
      const double lo = decode(f, codes[i]), hi = decode(f, codes[i + 1]);
      const double mid = (lo + hi) / 2;  // exact in float: fp8 values have 4 significant bits
      const float m = static_cast<float>(sign * mid);
      ASSERT_EQ(static_cast<double>(m), sign * mid);
      const unsigned s = sign < 0 ? 0x80u : 0u;
      const unsigned even = codes[i] % 2 == 0 ? codes[i] : codes[i + 1];
      EXPECT_EQ(lib_encode(f, m), s | even) << f.name << " tie " << sign * mid;
      EXPECT_EQ(lib_encode(f, std::nextafter(m, 0.0f)), s | codes[i])
          << f.name << " just below the tie " << sign * mid;
      EXPECT_EQ(lib_encode(f, std::nextafter(m, static_cast<float>(sign * INFINITY))),
                s | codes[i + 1])
          << f.name << " just above the tie " << sign * mid;
      ++ties;
    }
  }
  EXPECT_EQ(ties, 2 * static_cast<int>(codes.size() - 1));
}

TEST_P(Float8, OverflowSaturatesAndUnderflowKeepsTheSign) {
  const Format& f = GetParam();
  const unsigned max = finite_positive(f).back();
  const double ulp = f.max_finite - decode(f, max - 1);
  for (double big :
       {f.max_finite + ulp / 2, f.max_finite + ulp, 1e30, 3.4e38, static_cast<double>(INFINITY)}) {
    EXPECT_EQ(lib_encode(f, static_cast<float>(big)), max) << f.name << " " << big;
    EXPECT_EQ(lib_encode(f, static_cast<float>(-big)), 0x80u | max) << f.name << " " << -big;
  }
  const double tiny = decode(f, 1);  // the smallest subnormal
  EXPECT_EQ(lib_encode(f, static_cast<float>(tiny / 2)), 0x00) << "half of it ties to zero";
  EXPECT_EQ(lib_encode(f, static_cast<float>(-tiny / 2)), 0x80) << "-0 keeps its sign";
  EXPECT_EQ(lib_encode(f, std::nextafter(static_cast<float>(tiny / 2), 1.0f)), 0x01);
  EXPECT_EQ(lib_encode(f, static_cast<float>(tiny * 1.5)), 0x02) << "1.5 ulp ties to even 2";
  EXPECT_EQ(lib_encode(f, 1e-30f), 0x00);
  EXPECT_EQ(lib_encode(f, -1e-45f), 0x80) << "an f32 subnormal";
  EXPECT_EQ(lib_encode(f, std::numeric_limits<float>::quiet_NaN()), 0x7f);
  EXPECT_EQ(lib_encode(f, -std::numeric_limits<float>::quiet_NaN()), 0x7f) << "sign dropped";
}

TEST_P(Float8, RandomFloatsConvertAsTheNearestValueSearch) {
  const Format& f = GetParam();
  std::mt19937 rng(12345);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<double> unit(-1, 1);
  const Reference ref(f);
  int wrong = 0;
  for (int i = 0; i < 2'000'000; ++i) {
    // Half arbitrary bit patterns (every exponent, NaNs, infinities), half in the format's range.
    const float x = i % 2 ? std::bit_cast<float>(bits(rng))
                          : static_cast<float>(unit(rng) * std::ldexp(1.0, (i / 2) % 40 - 20));
    const uint8_t want = ref.encode(x), got = lib_encode(f, x);
    if (want != got && wrong++ < 8)
      ADD_FAILURE() << f.name << " " << x << " (bits " << hex(std::bit_cast<uint32_t>(x))
                    << "): " << hex(got) << ", the nearest-value search gives " << hex(want);
  }
  EXPECT_EQ(wrong, 0);
}

INSTANTIATE_TEST_SUITE_P(Formats, Float8, ::testing::Values(kE4M3, kE5M2),
                         [](const ::testing::TestParamInfo<Format>& i) {
                           return std::string(i.param.name);
                         });

TEST(Float8Types, AreOneByteDTypesNamedLikeTheOthers) {
  EXPECT_EQ(dtype_v<float8_e4m3>, DType::F8E4M3);
  EXPECT_EQ(dtype_v<float8_e5m2>, DType::F8E5M2);
  EXPECT_EQ(dtype_name(DType::F8E4M3), "f8e4m3");
  EXPECT_EQ(dtype_name(DType::F8E5M2), "f8e5m2");
  EXPECT_EQ(dtype_size(DType::F8E4M3), 1u);
  EXPECT_TRUE(is_float(DType::F8E5M2));
  EXPECT_TRUE(is_fp8(DType::F8E4M3));
  EXPECT_FALSE(is_fp8(DType::F16));
  static_assert(float8_e4m3(448.0f).bits == 0x7e && float8_e5m2(1.0f).bits == 0x3c);
  std::ostringstream os;
  os << float8_e4m3(0.5f) << " " << float8_e5m2(-2.0f);
  EXPECT_EQ(os.str(), "0.5 -2");
}

}  // namespace
}  // namespace tessera

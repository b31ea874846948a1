// The binding rule both launchers share (core/narrowing.hpp): a value binds to a type only if the
// type holds it; a floating-point type rounds to nearest but may not overflow to an infinity.
#include "tessera/core/narrowing.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tessera/core/error.hpp"

namespace tessera {
namespace {

// The compile-time rule of the SIMT launcher: no conversion that can narrow, whatever the value.
static_assert(Converts<int64_t, int32_t>);
static_assert(Converts<double, float>);
static_assert(!Converts<int32_t, int64_t>);
static_assert(!Converts<float, double>);
static_assert(!Converts<uint32_t, int32_t>);

TEST(Narrowing, IntegersBindOnlyWithinTheTargetsRange) {
  EXPECT_EQ(narrowing<int8_t>(127), Narrowing::None);
  EXPECT_EQ(narrowing<int8_t>(-128), Narrowing::None);
  EXPECT_EQ(narrowing<int8_t>(128), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<int8_t>(-129), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<uint8_t>(-1), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<int64_t>(std::numeric_limits<uint64_t>::max()), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<int64_t>(uint64_t{INT64_MAX}), Narrowing::None);
  EXPECT_EQ(narrowing<int32_t>('a'), Narrowing::None);  // character types widen first
  EXPECT_EQ(narrowing<uint8_t>(true), Narrowing::None);
}

TEST(Narrowing, FloatingValuesBindToIntegersOnlyWhenWholeFiniteAndInRange) {
  EXPECT_EQ(narrowing<uint8_t>(255.0), Narrowing::None);
  EXPECT_EQ(narrowing<uint8_t>(-0.0), Narrowing::None);
  EXPECT_EQ(narrowing<uint8_t>(256.0), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<uint8_t>(-1.0), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<int32_t>(2.5), Narrowing::Fraction);
  EXPECT_EQ(narrowing<int32_t>(-0.25f), Narrowing::Fraction);
  EXPECT_EQ(narrowing<int32_t>(half(2.5f)), Narrowing::Fraction);
  // 2^63 is one past int64's largest; -2^63 is its smallest.
  EXPECT_EQ(narrowing<int64_t>(9223372036854775808.0), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<int64_t>(-9223372036854775808.0), Narrowing::None);
  EXPECT_EQ(narrowing<int64_t>(std::nan("")), Narrowing::NotFinite);
  EXPECT_EQ(narrowing<int32_t>(-HUGE_VAL), Narrowing::NotFinite);
}

TEST(Narrowing, FloatingTargetsRoundButRefuseAnOverflowToInfinity) {
  EXPECT_EQ(narrowing<float>(0.1), Narrowing::None);  // rounds, as arithmetic does
  EXPECT_EQ(narrowing<float>(static_cast<double>(FLT_MAX)), Narrowing::None);
  EXPECT_EQ(narrowing<float>(1e39), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<float>(HUGE_VAL), Narrowing::None);  // an infinity stays one
  EXPECT_EQ(narrowing<float>(std::nan("")), Narrowing::None);
  // f16: 65519 rounds down to its largest finite value 65504; 65520 rounds up to infinity.
  EXPECT_EQ(narrowing<half>(65519.0), Narrowing::None);
  EXPECT_EQ(narrowing<half>(65520.0), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<half>(int64_t{1} << 40), Narrowing::OutOfRange);
  // bf16: f32's largest value rounds up past bf16's.
  EXPECT_EQ(narrowing<bfloat16>(FLT_MAX), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<bfloat16>(3.0e38f), Narrowing::None);
  EXPECT_EQ(narrowing<double>(std::numeric_limits<long double>::max()), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<double>(std::numeric_limits<uint64_t>::max()), Narrowing::None);
}

TEST(Narrowing, BoolTakesOnlyZeroAndOne) {
  EXPECT_EQ(narrowing<bool>(0), Narrowing::None);
  EXPECT_EQ(narrowing<bool>(1.0), Narrowing::None);
  EXPECT_EQ(narrowing<bool>(true), Narrowing::None);
  EXPECT_EQ(narrowing<bool>(2), Narrowing::NotABool);
  EXPECT_EQ(narrowing<bool>(-1), Narrowing::NotABool);
  EXPECT_EQ(narrowing<bool>(0.5), Narrowing::NotABool);
}

TEST(Narrowing, ValuesAreShownExactly) {
  EXPECT_EQ(value_text_of(4294967296.5), "4294967296.5");
  EXPECT_EQ(value_text_of(1e300), "1e+300");
  EXPECT_EQ(value_text_of(0.1f), "0.10000000149011612");  // the f32 nearest 0.1, exactly shown
  EXPECT_EQ(value_text_of(std::nan("")), "NaN");
  EXPECT_EQ(value_text_of(-HUGE_VAL), "-inf");
  EXPECT_EQ(value_text_of(std::numeric_limits<uint64_t>::max()), "18446744073709551615");
  EXPECT_EQ(value_text_of(int8_t{-5}), "-5");  // a number, not a character
  EXPECT_EQ(value_text_of(true), "true");
  EXPECT_EQ(value_text_of(half(0.5f)), "0.5");
}

TEST(Narrowing, ReasonsNameTheTypeAndWhatItHolds) {
  EXPECT_EQ(narrowing_reason(Narrowing::OutOfRange, DType::I8), "does not fit an i8 (-128 to 127)");
  EXPECT_EQ(narrowing_reason(Narrowing::OutOfRange, DType::BF16),
            "does not fit a bf16 (largest finite value about 3.39e+38)");
  EXPECT_EQ(narrowing_reason(Narrowing::Fraction, DType::U8),
            "has a fractional part, which a u8 cannot hold");
  EXPECT_EQ(narrowing_reason(Narrowing::NotFinite, DType::I16),
            "is not a finite number, which an i16 cannot hold");
  EXPECT_THROW((void)narrowing_reason(Narrowing::None, DType::I32), InternalError);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(Narrowing, Fp8TargetsRoundButRefuseWhatWouldSaturate) {
  // fp8 conversions saturate instead of overflowing: a value that would round past the largest
  // finite one is refused, one that rounds down to it binds.
  EXPECT_EQ(narrowing<float8_e4m3>(0.3), Narrowing::None);
  EXPECT_EQ(narrowing<float8_e4m3>(464.0), Narrowing::None);  // ties to 448
  EXPECT_EQ(narrowing<float8_e4m3>(464.5), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<float8_e4m3>(-1000), Narrowing::OutOfRange);
  EXPECT_EQ(narrowing<float8_e5m2>(61439.0), Narrowing::None);
  EXPECT_EQ(narrowing<float8_e5m2>(61440.0), Narrowing::OutOfRange);    // ties past 57344
  EXPECT_EQ(narrowing<float8_e5m2>(-HUGE_VAL), Narrowing::OutOfRange);  // a cast saturates it
  EXPECT_EQ(narrowing<float8_e4m3>(std::nan("")), Narrowing::None);
  EXPECT_EQ(narrowing<float>(float8_e4m3(448.0f)), Narrowing::None);
  EXPECT_EQ(value_text_of(float8_e5m2(-0.5f)), "-0.5");
  EXPECT_EQ(narrowing_reason(Narrowing::OutOfRange, DType::F8E4M3),
            "does not fit an f8e4m3 (largest finite value 448)");
}

}  // namespace
}  // namespace tessera

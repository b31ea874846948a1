// Class 10 of issue 10 on the CPU backend: integers exact, overflow wraps (integer_semantics.hpp).
#include "safety/backends/integer_semantics.hpp"

namespace tessera::test::integers {
namespace {

TEST(CpuIntegers, I64AboveTwoPow53SurvivesACopy) {
  i64_above_2_pow_53_survives_a_copy(Device::cpu());
}
TEST(CpuIntegers, U8AndI8SurviveACopy) {
  u8_and_i8_survive_a_copy(Device::cpu());
}
TEST(CpuIntegers, I64AddWrapsInsteadOfSaturating) {
  i64_add_wraps(Device::cpu());
}
TEST(CpuIntegers, I64MultiplyWraps) {
  i64_multiply_wraps(Device::cpu());
}
TEST(CpuIntegers, I32AndI8AddsWrap) {
  narrow_integer_adds_wrap(Device::cpu());
}
TEST(CpuIntegers, I64ConstantsAboveTwoPow53AreExact) {
  i64_constants_are_exact(Device::cpu());
}
TEST(CpuIntegers, I64SumWrapsAndStaysExact) {
  i64_sum_wraps_and_stays_exact(Device::cpu());
}

}  // namespace
}  // namespace tessera::test::integers

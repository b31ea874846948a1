// Class 10 of issue 10 on the GPU (the twins of the CPU tests): integers exact, overflow wraps
// (integer_semantics.hpp).
#include "safety/backends/integer_semantics.hpp"

namespace tessera::test::integers {
namespace {

TEST(GpuIntegers, I64AboveTwoPow53SurvivesACopy) {
  i64_above_2_pow_53_survives_a_copy(Device::cuda(0));
}
TEST(GpuIntegers, U8AndI8SurviveACopy) {
  u8_and_i8_survive_a_copy(Device::cuda(0));
}
TEST(GpuIntegers, I64AddWrapsInsteadOfSaturating) {
  i64_add_wraps(Device::cuda(0));
}
TEST(GpuIntegers, I64MultiplyWraps) {
  i64_multiply_wraps(Device::cuda(0));
}
TEST(GpuIntegers, I32AndI8AddsWrap) {
  narrow_integer_adds_wrap(Device::cuda(0));
}
TEST(GpuIntegers, I64ConstantsAboveTwoPow53AreExact) {
  i64_constants_are_exact(Device::cuda(0));
}
TEST(GpuIntegers, I64SumWrapsAndStaysExact) {
  i64_sum_wraps_and_stays_exact(Device::cuda(0));
}

}  // namespace
}  // namespace tessera::test::integers

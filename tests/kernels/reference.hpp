// Shared by the kernel library's tests: the device the tests run on, seeded random inputs, and
// comparison of a kernel's result with a double-precision reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::test {

// TESSERA_TEST_DEVICE (cpu, cuda, cuda:N), else the CPU.
Device test_device();
// Whether test_device() can run kernels here (a GPU run on a machine without one cannot: why).
bool device_usable(std::string* why);
// First in every test: a GPU run on a machine without a usable GPU skips, saying why.
#define TESSERA_REQUIRE_TEST_DEVICE()                                 \
  do {                                                                \
    std::string why_;                                                 \
    if (!::tessera::test::device_usable(&why_)) GTEST_SKIP() << why_; \
  } while (0)

// The seed of this process's random inputs: TESSERA_TEST_SEED if set, else fresh (printed once,
// so a failure can be replayed).
uint64_t test_seed();

// n values uniform in [lo, hi), rounded to T, from a generator seeded with test_seed() and `salt`.
template <Element T>
std::vector<T> random_values(int64_t n, double lo, double hi, uint64_t salt) {
  std::mt19937_64 gen(test_seed() * 0x9E3779B97F4A7C15ull + salt);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) {
    if constexpr (std::is_integral_v<T>)
      e = static_cast<T>(std::floor(dist(gen)));
    else
      e = T(static_cast<float>(dist(gen)));
  }
  return v;
}

// The values widened exactly to double.
template <Element T>
std::vector<double> widen(const std::vector<T>& v) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_arithmetic_v<T>)
      out[i] = static_cast<double>(v[i]);
    else
      out[i] = static_cast<double>(static_cast<float>(v[i]));
  }
  return out;
}

// T's unit roundoff (half an ulp at 1): what one rounding of a result to T may cost, relatively.
template <Element T>
constexpr double unit_roundoff() {
  if constexpr (std::is_same_v<T, half>)
    return 0x1p-11;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 0x1p-8;
  else if constexpr (std::is_same_v<T, float>)
    return 0x1p-24;
  else
    return 0x1p-53;
}

// The absolute spacing of T's subnormals: the error bound of a rounding to T near zero.
template <Element T>
constexpr double subnormal_spacing() {
  if constexpr (std::is_same_v<T, half>)
    return 0x1p-24;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 0x1p-133;
  else if constexpr (std::is_same_v<T, float>)
    return 0x1p-149;
  else
    return 0x1p-1074;
}

// Every |got[i] - want[i]| <= rel * |want[i]| + abs; a failure names the first few elements.
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double rel,
                 double abs, const std::string& what);

}  // namespace tessera::test

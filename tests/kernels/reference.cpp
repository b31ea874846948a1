#include "kernels/reference.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <tessera/runtime/gpu.hpp>

namespace tessera::test {

Device test_device() {
  static const Device d = [] {
    const char* s = std::getenv("TESSERA_TEST_DEVICE");
    return s && *s ? Device::parse(s) : Device::cpu();
  }();
  return d;
}

bool device_usable(std::string* why) {
  return test_device().is_cpu() || runtime::gpu_usable(why);
}

uint64_t test_seed() {
  static const uint64_t seed = [] {
    const char* s = std::getenv("TESSERA_TEST_SEED");
    const uint64_t v =
        s && *s ? std::strtoull(s, nullptr, 10)
                : static_cast<uint64_t>(
                      std::chrono::steady_clock::now().time_since_epoch().count() & 0xFFFFFFFF);
    std::printf("kernels tests: random inputs from TESSERA_TEST_SEED=%llu\n",
                static_cast<unsigned long long>(v));
    return v;
  }();
  return seed;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double rel,
                 double abs, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = rel * std::fabs(want[i]) + abs;
    if (!(std::fabs(got[i] - want[i]) <= bound) && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", the reference is "
                    << want[i] << " (bound " << bound << ", seed " << test_seed() << ")";
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements are off";
}

}  // namespace tessera::test

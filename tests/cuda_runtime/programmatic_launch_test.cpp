// Which launches carry programmatic stream serialization (programmatic dependent launch): only a
// kernel whose code waits for the grids before it, on sm_90 and newer, under a driver that keeps
// the programmatic edges through graph capture, and not under TESSERA_PDL=0. CPU-side: the
// decision, not a launch (GPU tests: tests/runtime/pdl_gpu_test.cpp).
#include <gtest/gtest.h>

#include <string>

#include "../runtime/scoped_env.hpp"
#include "tessera/backend/cuda/launch.hpp"
#include "tessera/core/error.hpp"

namespace tessera::test {
namespace {

using backend::cuda::Arch;
using backend::cuda::programmatic_serialization;

const Arch kSm80{8, 0, false}, kSm89{8, 9, false}, kSm90{9, 0, false}, kSm90a{9, 0, true},
    kSm100a{10, 0, true};
constexpr int kCuda13 = 13000, kCuda123 = 12030, kCuda122 = 12020;

TEST(ProgrammaticLaunch, ATileKernelThatWaitsIsLaunchedSoOnSm90AndNewer) {
  ScopedEnv pdl("TESSERA_PDL", nullptr);
  for (const Arch& a : {kSm90, kSm90a, kSm100a}) {
    EXPECT_TRUE(programmatic_serialization(a, /*kernel_waits=*/true, kCuda13)) << a.str();
    EXPECT_TRUE(programmatic_serialization(a, true, kCuda123)) << a.str();
  }
}

TEST(ProgrammaticLaunch, AmpereAndAdaHaveNoGridDependencyControlAndLaunchPlainly) {
  ScopedEnv pdl("TESSERA_PDL", "1");
  for (const Arch& a : {kSm80, kSm89})
    EXPECT_FALSE(programmatic_serialization(a, true, kCuda13)) << a.str();
}

TEST(ProgrammaticLaunch, AKernelWithoutTheWaitNeverCarriesTheAttribute) {
  // Hand-written source (SIMT kernels, GpuKernelSource without waits_for_prior_grids) and code
  // built for sm_80 but run on an sm_90 GPU (TESSERA_TARGET_ARCH=sm_80) lack the wait.
  ScopedEnv pdl("TESSERA_PDL", "1");
  EXPECT_FALSE(programmatic_serialization(kSm90a, /*kernel_waits=*/false, kCuda13));
}

TEST(ProgrammaticLaunch, ADriverOlderThan12_3LaunchesPlainly) {
  ScopedEnv pdl("TESSERA_PDL", nullptr);
  EXPECT_FALSE(programmatic_serialization(kSm90a, true, kCuda122));
}

TEST(ProgrammaticLaunch, TesseraPdlZeroTurnsItOffAndOneOrUnsetLeavesItOn) {
  ScopedEnv pdl("TESSERA_PDL", "0");
  EXPECT_FALSE(programmatic_serialization(kSm90a, true, kCuda13));
  pdl.set("1");
  EXPECT_TRUE(programmatic_serialization(kSm90a, true, kCuda13));
  pdl.set("");
  EXPECT_TRUE(programmatic_serialization(kSm90a, true, kCuda13));
  pdl.set(nullptr);
  EXPECT_TRUE(programmatic_serialization(kSm90a, true, kCuda13));
}

TEST(ProgrammaticLaunch, TheCodeGeneratorIsToldByTesseraPdlToo) {
  ScopedEnv pdl("TESSERA_PDL", "0");
  EXPECT_FALSE(backend::cuda::programmatic_launch_enabled());
  pdl.set("1");
  EXPECT_TRUE(backend::cuda::programmatic_launch_enabled());
  pdl.set(nullptr);
  EXPECT_TRUE(backend::cuda::programmatic_launch_enabled());
}

TEST(ProgrammaticLaunch, AnotherValueOfTesseraPdlIsAUsageErrorSayingWhatToSet) {
  ScopedEnv pdl("TESSERA_PDL", "off");
  // Reported wherever it is read, also where the answer would be no anyway.
  for (const Arch& a : {kSm80, kSm90a}) {
    try {
      (void)programmatic_serialization(a, true, kCuda13);
      FAIL() << "expected a UsageError";
    } catch (const UsageError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("TESSERA_PDL is 'off'"), std::string::npos) << m;
      EXPECT_NE(m.find("set it to 0"), std::string::npos) << m;
    }
  }
}

}  // namespace
}  // namespace tessera::test

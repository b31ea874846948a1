// The launch profile splits a launch's host time into its phases (bench/launch prints them):
// each phase of each launch is counted while profiling is on, and nothing while it is off.
#include <gtest/gtest.h>

#include <tessera/runtime/launch_profile.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(profiled_copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

TEST(LaunchProfile, CountsEveryPhaseOfEachLaunchWhileOn) {
  auto x = ones<float>({256}, Device::cpu());
  runtime::profile_launches(true);
  for (int i = 0; i < 5; ++i)
    (void)profiled_copy(zeros<float>({256}, Device::cpu()).partition({64}), x).sync();
  const runtime::LaunchProfile p = runtime::take_launch_profile();
  runtime::profile_launches(false);
  EXPECT_EQ(p.launches, 5u);
  EXPECT_GT(p.checks_ns, 0u);
  EXPECT_GT(p.lookup_ns, 0u);
  EXPECT_GT(p.pack_ns, 0u);
  EXPECT_GT(p.start_ns, 0u);
  EXPECT_GT(p.queue_ns, 0u);
  // The parts of the queueing that only a GPU launch has: none on the CPU backend.
  EXPECT_EQ(p.driver_launch_ns + p.marks_ns, 0u);
  // Taking it cleared it.
  EXPECT_EQ(runtime::take_launch_profile().launches, 0u);
}

TEST(LaunchProfile, CountsNothingWhileOff) {
  auto x = ones<float>({256}, Device::cpu());
  runtime::profile_launches(false);
  (void)profiled_copy(zeros<float>({256}, Device::cpu()).partition({64}), x).sync();
  const runtime::LaunchProfile p = runtime::take_launch_profile();
  EXPECT_EQ(p.launches, 0u);
  EXPECT_EQ(p.checks_ns + p.lookup_ns + p.pack_ns + p.start_ns + p.queue_ns + p.driver_launch_ns +
                p.marks_ns,
            0u);
}

}  // namespace
}  // namespace tessera::test

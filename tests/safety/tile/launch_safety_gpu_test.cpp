// Classes 8 and 4 of issue 10 on the GPU: the checks of launch_safety.hpp, and what only a GPU
// has. Its error report (an unpadded load outside its tensor) lives in the kernel's module, which
// every launch of the kernel shares: each launch now copies it out, and clears it, behind its own
// kernel on the stream, so one launch's error never surfaces in another's sync().
#include <algorithm>

#include "safety/tile/launch_safety.hpp"

namespace tessera::test::launch_safety {
namespace {

const Device kGpu = Device::cuda(0);

TEST(GpuErrorsPerLaunch, AnotherLaunchOfTheKernelDoesNotThrowTheFailingOnesError) {
  each_launch_reports_only_its_own_error(kGpu, false);
}
TEST(GpuErrorsPerLaunch, TheFailingLaunchStillReportsItsErrorAfterAnotherSynced) {
  each_launch_reports_only_its_own_error(kGpu, true);
}
// Many launches of one kernel in flight, every other one failing: each reports its own outcome.
TEST(GpuErrorsPerLaunch, InterleavedFailingAndSucceedingLaunchesEachReportTheirOwn) {
  auto short_x = from_host(iota(16), kGpu);
  auto long_x = from_host(iota(24), kGpu);
  using F = decltype(next_tile(pattern_output(kGpu), long_x));
  std::vector<F> futures;
  for (int i = 0; i < 16; ++i)
    futures.push_back(next_tile(pattern_output(kGpu), i % 2 ? short_x : long_x).async());
  for (int i = 15; i >= 0; --i) {  // synced in reverse, so later launches are asked first
    if (i % 2) {
      EXPECT_THROW((void)std::move(futures[static_cast<size_t>(i)]).sync(), BoundsError) << i;
    } else {
      auto [out, in] = std::move(futures[static_cast<size_t>(i)]).sync();
      EXPECT_EQ(std::move(out).unpartition().to_vector(), iota(16, 8)) << i;
    }
  }
}

TEST(GpuRefusedLaunchLosesNothing, DeviceMismatchLeavesTheOutputIntact) {
  auto z = pattern_output(kGpu);
  auto x = from_host(iota(16), Device::cpu());
  const std::string m = error_of<LaunchError>([&] { (void)copy_in(std::move(z), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'copy_in': argument 2 ('x', In) is on cpu but earlier arguments are on "
            "cuda:0; move it with .to(device) first");
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  expect_intact_and_launchable(z, kGpu);
}
TEST(GpuRefusedLaunchLosesNothing, RankErrorLeavesArgumentsIntact) {
  rank_error_leaves_arguments_intact(kGpu);
}
TEST(GpuRefusedLaunchLosesNothing, GridErrorLeavesBothOutputsIntact) {
  grid_error_leaves_both_outputs_intact(kGpu);
}
TEST(GpuRefusedLaunchLosesNothing, MovedFromInputLeavesTheOutputIntact) {
  moved_from_input_leaves_the_output_intact(kGpu);
}
TEST(GpuRefusedLaunchLosesNothing, TraceErrorLeavesArgumentsIntact) {
  trace_error_leaves_arguments_intact(kGpu);
}
TEST(GpuRefusedLaunchLosesNothing, NarrowingErrorLeavesArgumentsIntact) {
  narrowing_error_leaves_arguments_intact(kGpu);
}

TEST(GpuLostErrors, DroppedFailingFutureRefusesTheNextLaunchWhichLosesNothing) {
  dropped_failing_future_refuses_the_next_launch(kGpu);
}
TEST(GpuLostErrors, DroppedSuccessfulFutureLeavesNothing) {
  dropped_successful_future_leaves_nothing(kGpu);
}
TEST(GpuLostErrors, ErrorSeenThroughWaitIsNotKept) {
  error_seen_through_wait_is_not_kept(kGpu);
}
TEST(GpuLostErrors, SeveralAreCountedAndThrownOnce) {
  several_lost_errors_are_counted_and_thrown_once(kGpu);
}
TEST(GpuLostErrors, FutureAssignedOverKeepsItsError) {
  future_assigned_over_keeps_its_error(kGpu);
}
TEST(GpuLostErrors, StayOnTheThreadThatDroppedThemAndArePrintedAtItsExit) {
  lost_error_stays_on_the_thread_that_dropped_it(kGpu);
}

TEST(GpuScalarNarrowing, Int64PastI32IsRefusedAndItsExtremesBind) {
  int64_past_i32_is_refused(kGpu);
}
TEST(GpuScalarNarrowing, NegativeIntoUnsignedIsRefused) {
  negative_into_unsigned_is_refused(kGpu);
}
TEST(GpuScalarNarrowing, Uint64PastI64IsRefused) {
  uint64_past_i64_is_refused(kGpu);
}
TEST(GpuScalarNarrowing, FractionIntoIntegerIsRefusedAndWholeDoublesBindExactly) {
  fraction_into_integer_is_refused(kGpu);
}
TEST(GpuScalarNarrowing, DoubleOutOfIntegerRangeOrNotFiniteIsRefused) {
  double_out_of_integer_range_or_not_finite_is_refused(kGpu);
}
TEST(GpuScalarNarrowing, DoublePastTheFloatRangeIsRefusedAndInRangeRounds) {
  double_past_the_float_range_is_refused(kGpu);
}
TEST(GpuScalarNarrowing, NonBooleanIntoBoolIsRefused) {
  non_boolean_into_bool_is_refused(kGpu);
}

// Class 5: generated code holds a block's tile coordinate in 32 bits, so a grid past 2^31 - 1
// tiles along an axis would make two blocks store to one tile. It is refused at launch, and the
// partition comes back intact; its twin (the same 2^31 bytes in 2^29 tiles of 4) writes every tile.
TESSERA_KERNEL(put_seven, Out<uint8_t> z) {
  z.store(Tile<uint8_t>::full(z.shape(), uint8_t{7}));
};
TEST(GpuTileCoordinates, AGridPast32BitsAlongAnAxisIsRefusedAndItsTwinRuns) {
  const int64_t n = int64_t{1} << 31;
  auto z = zeros<uint8_t>({n}, kGpu).partition({1});
  const std::string m = error_of<LaunchError>([&] { (void)put_seven(std::move(z)); });
  EXPECT_NE(m.find("kernel 'put_seven' has a grid of [2147483648] tiles; the CUDA backend runs at "
                   "most 2^31 - 1 tiles along an axis; use larger tiles"),
            std::string::npos)
      << m;
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  auto wider = std::move(z).unpartition().partition({4});
  auto [out] = put_seven(std::move(wider)).sync();
  const std::vector<uint8_t> v = std::move(out).unpartition().to_vector();
  ASSERT_EQ(static_cast<int64_t>(v.size()), n);
  EXPECT_EQ(std::count(v.begin(), v.end(), uint8_t{7}), n);
}

}  // namespace
}  // namespace tessera::test::launch_safety

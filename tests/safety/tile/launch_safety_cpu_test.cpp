// Classes 8 and 4 of issue 10 on the CPU backend (launch_safety.hpp holds the checks; the GPU
// runs the same ones, plus the per-launch error report, in launch_safety_gpu_test.cpp).
#include "safety/tile/launch_safety.hpp"

namespace tessera::test::launch_safety {
namespace {

const Device kCpu = Device::cpu();

TEST(RefusedLaunchLosesNothing, RankErrorLeavesArgumentsIntact) {
  rank_error_leaves_arguments_intact(kCpu);
}
TEST(RefusedLaunchLosesNothing, GridErrorLeavesBothOutputsIntact) {
  grid_error_leaves_both_outputs_intact(kCpu);
}
TEST(RefusedLaunchLosesNothing, MovedFromInputLeavesTheOutputIntact) {
  moved_from_input_leaves_the_output_intact(kCpu);
}
TEST(RefusedLaunchLosesNothing, TraceErrorLeavesArgumentsIntact) {
  trace_error_leaves_arguments_intact(kCpu);
}
TEST(RefusedLaunchLosesNothing, NarrowingErrorLeavesArgumentsIntact) {
  narrowing_error_leaves_arguments_intact(kCpu);
}

TEST(ErrorsPerLaunch, EachLaunchReportsOnlyItsOwnErrorFailingSyncedFirst) {
  each_launch_reports_only_its_own_error(kCpu, true);
}
TEST(ErrorsPerLaunch, EachLaunchReportsOnlyItsOwnErrorFailingSyncedLast) {
  each_launch_reports_only_its_own_error(kCpu, false);
}

TEST(LostErrors, DroppedFailingFutureRefusesTheNextLaunchWhichLosesNothing) {
  dropped_failing_future_refuses_the_next_launch(kCpu);
}
TEST(LostErrors, DroppedSuccessfulFutureLeavesNothing) {
  dropped_successful_future_leaves_nothing(kCpu);
}
TEST(LostErrors, ErrorSeenThroughWaitIsNotKept) {
  error_seen_through_wait_is_not_kept(kCpu);
}
TEST(LostErrors, SeveralAreCountedAndThrownOnce) {
  several_lost_errors_are_counted_and_thrown_once(kCpu);
}
TEST(LostErrors, FutureAssignedOverKeepsItsError) {
  future_assigned_over_keeps_its_error(kCpu);
}
TEST(LostErrors, StayOnTheThreadThatDroppedThemAndArePrintedAtItsExit) {
  lost_error_stays_on_the_thread_that_dropped_it(kCpu);
}

TEST(ScalarNarrowing, Int64PastI32IsRefusedAndItsExtremesBind) {
  int64_past_i32_is_refused(kCpu);
}
TEST(ScalarNarrowing, NegativeIntoUnsignedIsRefused) {
  negative_into_unsigned_is_refused(kCpu);
}
TEST(ScalarNarrowing, Uint64PastI64IsRefused) {
  uint64_past_i64_is_refused(kCpu);
}
TEST(ScalarNarrowing, FractionIntoIntegerIsRefusedAndWholeDoublesBindExactly) {
  fraction_into_integer_is_refused(kCpu);
}
TEST(ScalarNarrowing, DoubleOutOfIntegerRangeOrNotFiniteIsRefused) {
  double_out_of_integer_range_or_not_finite_is_refused(kCpu);
}
TEST(ScalarNarrowing, DoublePastTheFloatRangeIsRefusedAndInRangeRounds) {
  double_past_the_float_range_is_refused(kCpu);
}
TEST(ScalarNarrowing, NonBooleanIntoBoolIsRefused) {
  non_boolean_into_bool_is_refused(kCpu);
}

}  // namespace
}  // namespace tessera::test::launch_safety

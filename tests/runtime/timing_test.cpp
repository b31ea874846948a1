// time_launches (tessera/timing.hpp): the ring hands every output back with its last result, the
// launches are numbered in order for rotating inputs, the rounds and launches are as many as the
// options say, the median is a round's time per launch, and bad options are rejected.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>
#include <tessera/timing.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;
using std::chrono::milliseconds;

TESSERA_KERNEL(copy_in, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

constexpr int64_t kN = 1000;

std::vector<Partition<float, 1>> outputs(int count) {
  std::vector<Partition<float, 1>> outs;
  for (int i = 0; i < count; ++i) outs.push_back(zeros<float>({kN}).partition({256}));
  return outs;
}

TEST(TimeLaunches, NumbersLaunchesInOrderAndHandsEachOutputBackWithItsLastResult) {
  // Three inputs in turn: input k is all k.
  std::vector<Tensor<float, 1>> inputs;
  for (int k = 0; k < 3; ++k) inputs.push_back(full<float>({kN}, static_cast<float>(k)));
  std::vector<int64_t> numbers;
  auto outs = outputs(2);
  TimingOptions options;
  options.launches_per_round = 4;
  options.warmup_rounds = 1;
  options.rounds = 3;
  const Timing t = time_launches(
      [&](Partition<float, 1> z, int64_t i) {
        numbers.push_back(i);
        return copy_in(std::move(z), inputs[static_cast<size_t>(i) % inputs.size()]);
      },
      outs, options);
  // 2 to fill the ring, then (1 warm-up + 3 timed rounds) of 4.
  ASSERT_EQ(numbers.size(), 18u);
  for (size_t i = 0; i < numbers.size(); ++i) EXPECT_EQ(numbers[i], static_cast<int64_t>(i));
  ASSERT_EQ(outs.size(), 2u);
  // The ring's slots took launches 16 and 17 last, oldest first: inputs 16 % 3 and 17 % 3.
  EXPECT_EQ(std::move(outs[0]).unpartition().to_vector(), std::vector<float>(kN, 1.0f));
  EXPECT_EQ(std::move(outs[1]).unpartition().to_vector(), std::vector<float>(kN, 2.0f));
  EXPECT_EQ(t.round_ms.size(), 3u);
  EXPECT_EQ(t.launches_per_round, 4);
  EXPECT_GT(t.median_ms, 0.0);
  EXPECT_LE(t.min_ms, t.median_ms);
  EXPECT_LE(t.median_ms, t.max_ms);
}

TEST(TimeLaunches, TakesALaunchWithoutANumber) {
  const auto x = full<float>({kN}, 7.0f);
  auto outs = outputs(1);
  TimingOptions options;
  options.launches_per_round = 2;
  options.rounds = 1;
  time_launches([&](Partition<float, 1> z) { return copy_in(std::move(z), x); }, outs, options);
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_EQ(std::move(outs[0]).unpartition().to_vector(), std::vector<float>(kN, 7.0f));
}

TEST(TimeLaunches, FlushingL2SubtractsTheFlushesAndKeepsResultsRight) {
  const auto x = full<float>({kN}, 3.0f);
  auto outs = outputs(2);
  // Designated initializers, as the README writes the options. The flush is small: the CPU
  // backend writes it in the interpreter.
  const Timing t = time_launches(
      [&](Partition<float, 1> z) { return copy_in(std::move(z), x); }, outs,
      {.rounds = 3, .launches_per_round = 3, .flush_l2 = true, .flush_bytes = 64 << 10});
  EXPECT_GT(t.flush_ms, 0.0);
  EXPECT_GE(t.median_ms, 0.0);
  EXPECT_NE(t.str().find("L2 flushed before each"), std::string::npos) << t.str();
  for (auto& out : outs)
    EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(kN, 3.0f));
}

TEST(TimeSteps, RunsWarmupAndTimedRoundsOfTheGivenLength) {
  int steps = 0;
  TimingOptions options;
  options.launches_per_round = 5;
  options.warmup_rounds = 2;
  options.rounds = 3;
  const Timing t = runtime::timing::time_steps([&] { ++steps; }, Device::cpu(), options);
  EXPECT_EQ(steps, 25);
  EXPECT_EQ(t.round_ms.size(), 3u);
}

TEST(TimeSteps, MedianIsARoundsTimePerStepAndCalibrationFillsARound) {
  TimingOptions options;
  options.round_ms = 20;
  options.rounds = 3;
  options.warmup_rounds = 0;
  const Timing t = runtime::timing::time_steps([] { std::this_thread::sleep_for(milliseconds(2)); },
                                               Device::cpu(), options);
  EXPECT_GE(t.median_ms, 2.0);  // a sleep lasts at least what it asks for
  // At least 2 ms a step: a 20 ms round holds at most 10.
  EXPECT_GE(t.launches_per_round, 1);
  EXPECT_LE(t.launches_per_round, 10);
}

TEST(TimeLaunches, RefusesNoOutputsAndOptionsOutOfRange) {
  std::vector<Partition<float, 1>> none;
  const auto x = full<float>({kN}, 1.0f);
  auto launch = [&](Partition<float, 1> z) { return copy_in(std::move(z), x); };
  try {
    time_launches(launch, none);
    FAIL() << "timed with no outputs";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "time_launches: no outputs; pass at least one (two or three keep a GPU busy: "
                 "each launch in flight needs its own output)");
  }
  TimingOptions options;
  options.rounds = 0;
  try {
    runtime::timing::time_steps([] {}, Device::cpu(), options);
    FAIL() << "timed zero rounds";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "time_launches: TimingOptions::rounds is 0; it must be at least 1");
  }
}

}  // namespace
}  // namespace tessera::test

// GPU launches have no event of their own (src/runtime/gpu_timeline.hpp): a stream's launches are
// numbered and an event is recorded every few launches or when something needs one. These check
// that every question still gets the right answer: a wait for a launch no event covered when it was
// queued, another stream ordered after such a launch, a poll, and memory freed behind a launch
// that is still running on another stream. Skip without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/runtime/launch_profile.hpp>
#include <tessera/runtime/stream.hpp>
#include <tessera/tessera.hpp>

#include "runtime/gpu_timeline.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(tl_add, Out<float> z, In<float> x, Scalar<float> v) {
  z.store(load_like(x, z) + v);
};
TESSERA_KERNEL(tl_twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
// A long dependent chain per element (tens of microseconds a launch or more): converges to 2.
TESSERA_KERNEL(tl_slow, Out<float> z, In<float> x, Scalar<int32_t> n) {
  Tile<float> acc = load_like(x, z);
  for_range(0, n, [&](Index) { acc = acc * 0.5f + 1.0f; });
  z.store(acc);
};

#define SKIP_WITHOUT_GPU()                               \
  do {                                                   \
    std::string why;                                     \
    if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why; \
  } while (0)

constexpr int64_t kSmall = 4096;
constexpr int64_t kBig = int64_t{1} << 20;
constexpr int kSlowSteps = 4000;

TEST(GpuTimeline, AFutureWaitedForAfterAHundredLaunchesWithoutEventsHoldsItsResult) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  // A stream of its own: another test's waits may have given the device's stream a mark per
  // launch for a while.
  const Stream own(gpu);
  const StreamScope on(own);
  auto x = ones<float>({kSmall}, gpu);
  using Pending = decltype(tl_add(zeros<float>({kSmall}, gpu).partition({kSmall}), x, 0.0f));
  std::vector<std::optional<Pending>> pending(100);
  std::vector<Partition<float, 1>> outs;
  for (int i = 0; i < 100; ++i) outs.push_back(zeros<float>({kSmall}, gpu).partition({kSmall}));
  const uint64_t marks_before = runtime::gpu_marks_recorded();
  for (int i = 0; i < 100; ++i)
    pending[i].emplace(tl_add(std::move(outs[i]), x, static_cast<float>(i)));
  const uint64_t marks = runtime::gpu_marks_recorded() - marks_before;
  // One event per StreamTimeline::kMarkEvery launches, not one per launch.
  EXPECT_LE(marks, 100 / runtime::StreamTimeline::kMarkEvery + 1);
  // The 57th first (no mark was recorded right behind it), then the rest, newest first.
  auto [z57, x57, v57] = std::move(*pending[56]).sync();
  EXPECT_EQ(std::move(z57).unpartition().to_vector(), std::vector<float>(kSmall, 57.0f));
  for (int i = 99; i >= 0; --i) {
    if (i == 56) continue;
    auto [z, xi, vi] = std::move(*pending[i]).sync();
    EXPECT_EQ(std::move(z).unpartition().to_vector(),
              std::vector<float>(kSmall, static_cast<float>(i + 1)))
        << "launch " << i + 1;
  }
}

// A ring of three launches in flight that waits for the oldest before each launch (time_launches,
// the benches): with a mark every StreamTimeline::kMarkEvery launches, a wait finds no mark behind
// the oldest every few steps, records one behind all three and so waits for all of them, draining
// the stream. The second such wait gives the stream's next launches a mark each, so that from then
// on a wait waits for its own launch only.
TEST(GpuTimeline, ARingWaitingForItsOldestLaunchGetsAMarkPerLaunchAfterTwoWaitsDrainedIt) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream own(gpu);
  const StreamScope on(own);
  auto x = ones<float>({kSmall}, gpu);
  // Slow launches: the two behind the oldest are still running when it is waited for.
  auto launch = [&](Partition<float, 1> out) {
    return tl_slow(std::move(out), x, kSlowSteps).async();
  };
  std::deque<decltype(launch(std::declval<Partition<float, 1>>()))> ring;
  for (int i = 0; i < 3; ++i)
    ring.push_back(launch(zeros<float>({kSmall}, gpu).partition({kSmall})));
  auto step = [&] {
    Partition<float, 1> out = std::get<0>(std::move(ring.front()).sync());
    ring.pop_front();
    EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(kSmall, 2.0f));
    ring.push_back(launch(zeros<float>({kSmall}, gpu).partition({kSmall})));
  };
  // Launches 1-3 queued. Steps 1 and 4 wait for launches 1 and 4, which no mark covers: each
  // records one behind launches 3 and 6 and waits for them.
  for (int i = 0; i < 4; ++i) step();
  const uint64_t marks_before = runtime::gpu_marks_recorded();
  for (int i = 0; i < 30; ++i) step();
  EXPECT_EQ(runtime::gpu_marks_recorded() - marks_before, 30u)
      << "one mark recorded by each launch, none by a wait";
  while (!ring.empty()) {
    EXPECT_EQ(std::get<0>(std::move(ring.front()).sync()).unpartition().to_vector(),
              std::vector<float>(kSmall, 2.0f));
    ring.pop_front();
  }
}

// bench/launch's split of a GPU launch's queueing: the driver's launch call is timed on every
// launch, the marks' event records only on the launches that record one, both inside queue_ns.
TEST(GpuTimeline, TheLaunchProfileSplitsTheQueueingIntoTheDriversCallAndTheMarks) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream own(gpu);
  const StreamScope on(own);
  auto x = ones<float>({kSmall}, gpu);
  std::vector<Partition<float, 1>> outs;
  for (int i = 0; i < 8; ++i) outs.push_back(zeros<float>({kSmall}, gpu).partition({kSmall}));
  (void)tl_add(zeros<float>({kSmall}, gpu).partition({kSmall}), x, 1.0f).sync();  // compiled
  const uint64_t marks_before = runtime::gpu_marks_recorded();
  runtime::profile_launches(true);
  using Pending = decltype(tl_add(std::move(outs[0]), x, 1.0f));
  std::vector<std::optional<Pending>> pending(8);
  for (int i = 0; i < 8; ++i) pending[i].emplace(tl_add(std::move(outs[i]), x, 1.0f));
  const runtime::LaunchProfile p = runtime::take_launch_profile();
  runtime::profile_launches(false);
  const uint64_t marks = runtime::gpu_marks_recorded() - marks_before;
  EXPECT_EQ(p.launches, 8u);
  EXPECT_GT(p.driver_launch_ns, 0u);
  EXPECT_GE(marks, 1u) << "8 launches record a mark every StreamTimeline::kMarkEvery";
  EXPECT_GT(p.marks_ns, 0u);
  EXPECT_LE(p.driver_launch_ns + p.marks_ns, p.queue_ns);
  for (auto& f : pending)
    EXPECT_EQ(std::get<0>(std::move(*f).sync()).unpartition().to_vector(),
              std::vector<float>(kSmall, 2.0f));
}

TEST(GpuTimeline, ASecondStreamOrderedAfterTheFiftySeventhLaunchOfTheFirstSeesItsResult) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream a(gpu), b(gpu);  // a new stream: its 57th launch is number 57 on its timeline
  auto x = zeros<float>({kBig}, gpu);
  std::vector<Tensor<float, 1>> outs;
  Tensor<float, 1> h57;
  std::optional<decltype(tl_twice(zeros<float>({kBig}, gpu).partition({1024}), h57))> doubled;
  for (int i = 1; i <= 100; ++i) {
    {
      const StreamScope on(a);
      auto [z, x1, n1] =
          tl_slow(zeros<float>({kBig}, gpu).partition({1024}), x, kSlowSteps).chain();
      if (i == 57)
        h57 = std::move(z).unpartition();
      else
        outs.push_back(std::move(z).unpartition());
    }
    if (i == 57) {  // queued right behind the 57th, before any mark covers it
      const StreamScope on(b);
      doubled.emplace(tl_twice(zeros<float>({kBig}, gpu).partition({1024}), h57));
    }
  }
  auto [y, h1] = std::move(*doubled).sync();
  const std::vector<float> got = std::move(y).unpartition().to_vector();
  const std::vector<float> h = h57.to_vector();
  ASSERT_NE(h[0], 0.0f);
  std::vector<float> want(h.size());
  for (size_t i = 0; i < h.size(); ++i) want[i] = h[i] * 2.0f;
  EXPECT_EQ(got, want);
}

TEST(GpuTimeline, ReadyBecomesTrueForALaunchNoMarkCovers) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream s(gpu);
  const StreamScope on(s);
  auto x = ones<float>({kSmall}, gpu);
  auto f = tl_add(zeros<float>({kSmall}, gpu).partition({kSmall}), x, 2.0f);  // launch 1
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!f.ready() && std::chrono::steady_clock::now() < deadline) {
  }
  EXPECT_TRUE(f.ready());
  auto [z, x1, v1] = std::move(f).sync();
  EXPECT_EQ(std::move(z).unpartition().to_vector(), std::vector<float>(kSmall, 3.0f));
}

TEST(GpuTimeline, MemoryFreedWhileItsLastLaunchRunsOnAnotherStreamIsFreedBehindIt) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const Stream a(gpu);
  for (int round = 0; round < 4; ++round) {
    {
      const StreamScope on(a);
      auto x = zeros<float>({kBig}, gpu);
      // Written at the end of a slow kernel; every handle dropped at once, while it runs.
      auto [z, x1, n1] =
          tl_slow(zeros<float>({kBig}, gpu).partition({1024}), x, kSlowSteps * 4).chain();
    }
    // Memory of the same size, from the device's pool: it must not be the freed memory while
    // the slow kernel can still write there.
    auto p = full<float>({kBig}, 7.0f, gpu);
    auto q = full<float>({kBig}, 7.0f, gpu);
    EXPECT_EQ(p.to_vector(), std::vector<float>(kBig, 7.0f)) << "round " << round;
    EXPECT_EQ(q.to_vector(), std::vector<float>(kBig, 7.0f)) << "round " << round;
  }
}

TEST(GpuTimeline, LaunchesOnADestroyedStreamAreStillWaitedForRight) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  auto x = zeros<float>({kBig}, gpu);
  using Pending = decltype(tl_slow(zeros<float>({kBig}, gpu).partition({1024}), x, 0));
  std::vector<std::optional<Pending>> pending(6);  // no mark behind the last two
  {
    const Stream s(gpu);
    const StreamScope on(s);
    for (int i = 0; i < 6; ++i)
      pending[i].emplace(
          tl_slow(zeros<float>({kBig}, gpu).partition({1024}), x, kSlowSteps * (i + 1)));
  }  // the stream is destroyed; its launches still run
  // A new stream may get the destroyed one's handle: its work is not in order with the old.
  const Stream t(gpu);
  std::optional<decltype(tl_twice(zeros<float>({kBig}, gpu).partition({1024}), x))> doubled;
  Tensor<float, 1> last;
  {
    auto [z, x1, n1] = std::move(*pending[5]).chain();
    last = std::move(z).unpartition();
    const StreamScope on(t);
    doubled.emplace(tl_twice(zeros<float>({kBig}, gpu).partition({1024}), last));
  }
  for (int i = 4; i >= 0; --i) {
    auto [z, x1, n1] = std::move(*pending[i]).sync();
    EXPECT_EQ(std::move(z).unpartition().to_vector(), std::vector<float>(kBig, 2.0f))
        << "launch " << i + 1;
  }
  auto [y, l1] = std::move(*doubled).sync();
  EXPECT_EQ(std::move(y).unpartition().to_vector(), std::vector<float>(kBig, 4.0f));
}

// Once a later launch on the stream was waited for, the earlier ones are known done: asking about
// them (ready(), sync()) records no event and reads their results (Completion's published state,
// the timeline's count of finished launches; what bench/launch's "sync() of a finished launch"
// row times).
TEST(GpuTimeline, SyncOfLaunchesTheStreamHasPassedRecordsNoEventAndHandsBackTheirResults) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  auto x = ones<float>({kSmall}, gpu);
  using Pending = decltype(tl_add(zeros<float>({kSmall}, gpu).partition({kSmall}), x, 0.0f));
  std::vector<std::optional<Pending>> pending(8);
  for (int i = 0; i < 8; ++i)
    pending[i].emplace(
        tl_add(zeros<float>({kSmall}, gpu).partition({kSmall}), x, static_cast<float>(i)));
  pending[7]->wait();
  const uint64_t marks_before = runtime::gpu_marks_recorded();
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(pending[i]->ready()) << "launch " << i + 1;
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 8; ++i) EXPECT_NO_THROW(pending[i]->wait());
  std::vector<Partition<float, 1>> outs;
  for (int i = 0; i < 8; ++i) outs.push_back(std::get<0>(std::move(*pending[i]).sync()));
  EXPECT_EQ(runtime::gpu_marks_recorded(), marks_before);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(std::move(outs[i]).unpartition().to_vector(),
              std::vector<float>(kSmall, static_cast<float>(i + 1)))
        << "launch " << i + 1;
}

}  // namespace
}  // namespace tessera::test

// Waiting for a launch that is known to be done costs no lock and no question to the device: the
// outcome is published once (Completion's state) by whoever saw the end. These tests pin what
// that fast path must keep: the device is asked nothing more once the end is known, every waiter
// on every thread sees the error of a failed launch every time, a launch's predecessors are
// released before a waiter returns, and a Future hands its arguments back once, with several
// threads waiting on it and on the launches chained after it. (They run under ThreadSanitizer
// with the rest of runtime_tests: scripts/tsan_check.sh.)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/cpu_queue.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
using runtime::Completion;
using runtime::CpuQueueHold;
using runtime::DeviceWork;

// Device work that ends when the test says, and counts how often it is asked.
class CountedWork : public DeviceWork {
 public:
  CountedWork(std::atomic<bool>& finished, std::atomic<int>& asked)
      : finished_(finished), asked_(asked) {}
  bool done() override {
    ++asked_;
    return finished_.load();
  }
  void wait() override {
    ++asked_;
    while (!finished_.load()) std::this_thread::yield();
  }
  void order_on(void*) override { ++asked_; }

 private:
  std::atomic<bool>& finished_;
  std::atomic<int>& asked_;
};

TEST(CompletionWait, ALaunchKnownToBeDoneIsNeverAskedAboutAgain) {
  std::atomic<bool> finished{true};
  std::atomic<int> asked{0};
  Completion c(std::make_unique<CountedWork>(finished, asked));
  EXPECT_FALSE(c.known_done());  // nobody has looked yet
  c.wait();                      // looks once, and publishes the end
  const int after_first_wait = asked.load();
  EXPECT_GE(after_first_wait, 1);
  for (int i = 0; i < 1000; ++i) {
    c.wait();
    EXPECT_TRUE(c.ready());
    EXPECT_TRUE(c.finished());
    EXPECT_TRUE(c.known_done());
    EXPECT_TRUE(c.known_succeeded());
    EXPECT_FALSE(c.known_failed());
    EXPECT_FALSE(c.unseen_error());
    c.wait_quietly();
    int stream = 0;
    c.order_on(&stream);
  }
  EXPECT_EQ(asked.load(), after_first_wait);
}

TEST(CompletionWait, ManyThreadsWaitingForOneLaunchAllReturnOnceItEnds) {
  std::atomic<bool> finished{false};
  std::atomic<int> asked{0};
  Completion c(std::make_unique<CountedWork>(finished, asked));
  std::atomic<int> returned{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 8; ++i)
    waiters.emplace_back([&] {
      for (int k = 0; k < 100; ++k) c.wait();
      ++returned;
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(returned.load(), 0);
  finished = true;
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(returned.load(), 8);
  // Each waiter asked the device at most once before the end was published; none after.
  const int asked_by_waiters = asked.load();
  EXPECT_LE(asked_by_waiters, 8);
  c.wait();
  EXPECT_EQ(asked.load(), asked_by_waiters);
}

TEST(CompletionWait, AFailedLaunchThrowsItsErrorToEveryWaiterEveryTime) {
  Completion c("kernel 'k'");
  std::atomic<bool> go{false};
  std::atomic<int> thrown{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i)
    waiters.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int k = 0; k < 50; ++k) {
        try {
          c.wait();
        } catch (const BoundsError& e) {
          if (std::string(e.what()) == "outside") ++thrown;
        }
      }
    });
  c.finish(std::make_exception_ptr(BoundsError("outside")));
  go = true;
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(thrown.load(), 4 * 50);
  EXPECT_TRUE(c.known_failed());
  EXPECT_FALSE(c.known_succeeded());
  EXPECT_FALSE(c.unseen_error());  // a wait threw it: seen
  // The twin: a launch that succeeded throws nothing, to any waiter.
  Completion fine;
  fine.finish();
  EXPECT_NO_THROW(fine.wait());
  EXPECT_TRUE(fine.known_succeeded());
}

// A thread that sees the launch done without a lock finds its predecessors released (their
// blocks back in the pools), as a waiter woken under the lock does.
TEST(CompletionWait, APredecessorIsReleasedBeforeTheEndIsPublished) {
  for (int round = 0; round < 200; ++round) {
    auto before = std::make_shared<Completion>();
    before->finish();
    auto after = std::make_shared<Completion>();
    after->follow(std::span<const std::shared_ptr<Completion>>(&before, 1));
    EXPECT_EQ(before.use_count(), 2);
    std::thread finisher([&] { after->finish(); });
    while (!after->known_done()) std::this_thread::yield();
    EXPECT_EQ(before.use_count(), 1);
    finisher.join();
  }
}

// ---- through Futures, on the CPU backend ------------------------------------------------------

TESSERA_KERNEL(plus_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};
TESSERA_KERNEL(twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
// The last block reads past the end of x (unpadded) when x is no longer than z.
TESSERA_KERNEL(next_tile, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(0) + 1}, {64}, Pad::none()));
};

constexpr int64_t kN = 1 << 14;

std::vector<float> values(float mul, float add) {
  std::vector<float> v(static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i)
    v[static_cast<size_t>(i)] = static_cast<float>(i % 100) * mul + add;
  return v;
}

TEST(FutureWait, ThreadsWaitingOnOneFutureAndOnTheLaunchesChainedAfterItAllSeeTheirResults) {
  for (int round = 0; round < 20; ++round) {
    auto x = from_host(values(1, 0), Device::cpu());
    std::optional<decltype(twice(zeros<float>({kN}, Device::cpu()).partition({64}), x))> fb, fc;
    std::vector<std::thread> waiters;
    std::atomic<int> returned{0};
    {
      CpuQueueHold hold;  // everything queued before anything runs
      auto [z, x1] = plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
      Tensor<float, 1> zt = std::move(z).unpartition();
      fb.emplace(twice(zeros<float>({kN}, Device::cpu()).partition({64}), zt));
      fc.emplace(plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), zt));
      for (int i = 0; i < 4; ++i) {
        waiters.emplace_back([&] {
          fb->wait();
          fb->wait();
          ++returned;
        });
        waiters.emplace_back([&] {
          fc->wait();
          ++returned;
        });
      }
    }
    for (std::thread& t : waiters) t.join();
    EXPECT_EQ(returned.load(), 8);
    auto [b, zb] = std::move(*fb).sync();
    auto [c, zc] = std::move(*fc).sync();
    EXPECT_EQ(std::move(b).unpartition().to_vector(), values(2, 2));
    EXPECT_EQ(std::move(c).unpartition().to_vector(), values(1, 2));
    // Handed back once: the synced Futures own nothing, and their input's handles are the
    // caller's alone (partitioning needs the only one).
    EXPECT_NE(error_of<OwnershipError>([&] { fb->wait(); }).find("this Future was moved from"),
              std::string::npos);
    Tensor<float, 1> z_only = std::move(zb);
    zc = Tensor<float, 1>();
    auto again = std::move(z_only).partition({64});
    EXPECT_EQ(std::move(again).unpartition().to_vector(), values(1, 1));
  }
}

TEST(FutureWait, ThreadsWaitingOnALaunchChainedAfterAFailedOneAllGetItsError) {
  auto x = from_host(values(1, 0), Device::cpu());
  auto [bad, x1] = next_tile(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  auto f =
      plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), std::move(bad).unpartition());
  std::atomic<int> errors{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i)
    waiters.emplace_back([&] {
      for (int k = 0; k < 10; ++k) {
        try {
          f.wait();
        } catch (const LaunchError& e) {
          if (std::string(e.what()).find("next_tile") != std::string::npos) ++errors;
        }
      }
    });
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(errors.load(), 40);
  EXPECT_NE(
      error_of<LaunchError>([&] { (void)std::move(f).sync(); }).find("ordered after a launch of"),
      std::string::npos);
}

}  // namespace
}  // namespace tessera::test

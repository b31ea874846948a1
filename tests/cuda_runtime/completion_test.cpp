// Completion: finished by finish() (CPU launches), or by the device work it holds (GPU launches,
// whose errors surface at wait()). The device work here is a fake that the test controls.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "tessera/core/error.hpp"
#include "tessera/runtime/launch.hpp"

using namespace tessera;
using namespace tessera::runtime;

namespace {

// Device work that finishes when the test says, failing if told to.
class FakeWork : public DeviceWork {
 public:
  explicit FakeWork(std::atomic<int>& state, std::atomic<int>& waits)
      : state_(state), waits_(waits) {}
  // state: 0 running, 1 done, 2 failed
  bool done() override {
    if (state_ == 2) throw BackendError("CUDA driver call cuEventQuery failed: fake fault");
    return state_ == 1;
  }
  void wait() override {
    ++waits_;
    while (state_ == 0) std::this_thread::yield();
    if (state_ == 2) throw BackendError("CUDA driver call cuEventSynchronize failed: fake fault");
  }

 private:
  std::atomic<int>& state_;
  std::atomic<int>& waits_;
};

// Device work that counts what it is asked: how ordering asks the device.
class CountingWork : public DeviceWork {
 public:
  CountingWork(std::atomic<int>& queries, std::atomic<int>& orders)
      : queries_(queries), orders_(orders) {}
  bool done() override {
    ++queries_;
    return true;
  }
  void wait() override {}
  void order_on(void*) override { ++orders_; }

 private:
  std::atomic<int>& queries_;
  std::atomic<int>& orders_;
};

// Ordering a stream after a launch leaves the question to the work (a GPU launch asks the driver
// nothing when the stream is its own), and asks nothing at all once the launch is known done.
TEST(Completion, OrderingAsksTheWorkOnlyUntilTheLaunchIsKnownDone) {
  std::atomic<int> queries{0}, orders{0};
  Completion c(std::make_unique<CountingWork>(queries, orders));
  int stream = 0;
  c.order_on(&stream);
  EXPECT_EQ(orders.load(), 1);
  EXPECT_EQ(queries.load(), 0);  // the completion itself asked nothing
  EXPECT_FALSE(c.known_done());
  c.wait();
  EXPECT_TRUE(c.known_done());
  c.order_on(&stream);
  EXPECT_EQ(orders.load(), 1);
}

TEST(Completion, FinishedByFinishOnTheCpu) {
  Completion c;
  EXPECT_FALSE(c.ready());
  c.finish();
  EXPECT_TRUE(c.ready());
  EXPECT_NO_THROW(c.wait());
}

TEST(Completion, FirstFinishWins) {
  Completion c;
  c.finish(std::make_exception_ptr(KernelError("first")));
  c.finish();
  EXPECT_THROW(c.wait(), KernelError);
}

TEST(Completion, ReadyAsksTheDeviceWithoutBlocking) {
  std::atomic<int> state{0}, waits{0};
  Completion c(std::make_unique<FakeWork>(state, waits));
  EXPECT_FALSE(c.ready());
  EXPECT_EQ(waits.load(), 0);  // not done: ready() never blocks on the work
  state = 1;
  EXPECT_TRUE(c.ready());
  // Once done, the work's wait() (cheap by then) runs exactly once: it is where a GPU kernel's
  // own error report is collected, so a poll must not skip it.
  EXPECT_EQ(waits.load(), 1);
  EXPECT_NO_THROW(c.wait());
  EXPECT_EQ(waits.load(), 1);  // already known to be done: the device is not asked again
}

// Work that is done but whose wait() reports an error (as a kernel's error report does).
class DoneButFailed : public DeviceWork {
 public:
  bool done() override { return true; }
  void wait() override { throw BoundsError("unpadded load reached outside the tensor"); }
};

TEST(Completion, PollingDoesNotLoseTheErrorOfWorkThatIsDone) {
  Completion c(std::make_unique<DoneButFailed>());
  EXPECT_TRUE(c.ready());
  EXPECT_THROW(c.wait(), BoundsError);
}

TEST(Completion, WaitBlocksUntilTheDeviceWorkFinishes) {
  std::atomic<int> state{0}, waits{0};
  Completion c(std::make_unique<FakeWork>(state, waits));
  std::thread device([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    state = 1;
  });
  c.wait();
  EXPECT_EQ(state.load(), 1);
  EXPECT_TRUE(c.ready());
  device.join();
}

TEST(Completion, DeviceErrorSurfacesAtWaitEveryTime) {
  std::atomic<int> state{2}, waits{0};
  Completion c(std::make_unique<FakeWork>(state, waits));
  for (int i = 0; i < 2; ++i) {
    try {
      c.wait();
      FAIL() << "expected the device's BackendError";
    } catch (const BackendError& e) {
      EXPECT_NE(std::string(e.what()).find("fake fault"), std::string::npos);
    }
  }
  EXPECT_EQ(waits.load(), 1);
  EXPECT_TRUE(c.ready());  // done, with an error
}

TEST(Completion, DeviceErrorSeenByReadyIsKeptForWait) {
  std::atomic<int> state{2}, waits{0};
  Completion c(std::make_unique<FakeWork>(state, waits));
  EXPECT_TRUE(c.ready());
  EXPECT_THROW(c.wait(), BackendError);
  EXPECT_EQ(waits.load(), 0);
}

TEST(Completion, ConcurrentWaitersAllSeeTheDeviceError) {
  std::atomic<int> state{0}, waits{0};
  Completion c(std::make_unique<FakeWork>(state, waits));
  std::atomic<int> errors{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i)
    waiters.emplace_back([&] {
      try {
        c.wait();
      } catch (const BackendError&) {
        ++errors;
      }
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  state = 2;
  for (auto& t : waiters) t.join();
  EXPECT_EQ(errors.load(), 4);
}

// What a Future's destructor asks (future.hpp): the error, once, unless a wait() threw it.
TEST(Completion, UnseenErrorIsHandedOutOnceAndNeverAfterAWaitThrewIt) {
  Completion failed("kernel 'k'");
  failed.finish(std::make_exception_ptr(BoundsError("outside")));
  EXPECT_TRUE(failed.unseen_error());
  EXPECT_FALSE(failed.unseen_error());
  EXPECT_EQ(failed.label(), "kernel 'k'");

  Completion waited;
  waited.finish(std::make_exception_ptr(BoundsError("outside")));
  EXPECT_THROW(waited.wait(), BoundsError);
  EXPECT_FALSE(waited.unseen_error());

  Completion fine;
  fine.finish();
  EXPECT_FALSE(fine.unseen_error());
}

// It waits for device work first, and collects the work's own error.
TEST(Completion, UnseenErrorWaitsForTheDeviceWork) {
  std::atomic<int> state{0}, waits{0};
  Completion c(std::make_unique<FakeWork>(state, waits), "kernel 'k'");
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    state = 2;
  });
  const std::exception_ptr e = c.unseen_error();
  finisher.join();
  ASSERT_TRUE(e);
  EXPECT_THROW(std::rethrow_exception(e), BackendError);
}

}  // namespace

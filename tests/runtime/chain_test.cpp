// Chains on the CPU backend: a launch returns before its work runs (a worker pool runs it), a
// launch may take what pending work writes or reads (Future::chain()), and the runtime orders the
// two from per-storage tracking -- read after write, write after read, write after write -- with
// no host waits. Each test holds the workers (CpuQueueHold) while it issues, so the launches are
// all queued before any runs and two workers really could take them at once: a missing order
// shows as a wrong result. Attacks on ownership through a chain are each pinned to their error,
// each with a twin that runs.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/cpu_queue.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
using runtime::CpuQueueHold;

TESSERA_KERNEL(plus_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};
TESSERA_KERNEL(twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
TESSERA_KERNEL(set_to, Out<float> z, Scalar<float> v) {
  z.store(Tile<float>::full(z.shape(), 0.0f) + v);
};
// The last block reads the tile after its own, unpadded, past the end of x when x is no longer
// than z.
TESSERA_KERNEL(next_tile, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(0) + 1}, {64}, Pad::none()));
};

// Large enough that a kernel's blocks take a while on the interpreter: a launch that ran before
// the one it must follow had finished would read or leave a mix.
constexpr int64_t kN = 1 << 16;

std::vector<float> iota(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 1000);
  return v;
}
std::vector<float> mapped(const std::vector<float>& v, float mul, float add) {
  std::vector<float> out;
  for (float x : v) out.push_back(x * mul + add);
  return out;
}

// The message with each "(defined at file:line:col)", and the location of a quoted error, taken
// out: the rest is pinned.
std::string without_locations(const std::string& m) {
  const std::string defined = std::regex_replace(m, std::regex(R"( \(defined at [^)]*\))"), "");
  return std::regex_replace(defined, std::regex(R"("[^"]*:[0-9]+:[0-9]+: error: )"), "\"");
}

TEST(Chain, LaunchReturnsBeforeItsWorkRunsAndSyncWaitsForIt) {
  auto x = from_host(iota(kN), Device::cpu());
  auto z = zeros<float>({kN}, Device::cpu()).partition({64});
  std::optional<decltype(plus_one(std::move(z), x))> f;
  {
    CpuQueueHold hold;
    f.emplace(plus_one(std::move(z), x));
    EXPECT_FALSE(f->ready());  // queued, not run: the workers are held
  }
  auto [out, in] = std::move(*f).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), mapped(iota(kN), 1, 1));
}

TEST(Chain, PipelineOfEightDependentLaunchesIsIssuedWithoutHostWaits) {
  auto x = from_host(iota(kN), Device::cpu());
  Tensor<float, 1> result;
  std::optional<CpuQueueHold> hold(std::in_place);
  // Issued on another thread: a launch that waited for the one before it would never return
  // while the workers are held, and the wait below would time out instead of hanging the test.
  std::promise<void> issued;
  std::thread issuer([&] {
    Tensor<float, 1> t = x;
    for (int i = 0; i < 8; ++i) {
      auto [z, in] =
          plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), std::move(t)).chain();
      t = std::move(z).unpartition();
    }  // each intermediate result is dropped here, its launches still queued
    result = std::move(t);
    issued.set_value();
  });
  const bool in_time =
      issued.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  hold.reset();
  issuer.join();  // a thread ends after the chained launches whose results it dropped
  ASSERT_TRUE(in_time) << "issuing the chain waited for its work";
  EXPECT_EQ(result.to_vector(), mapped(iota(kN), 1, 8));  // a host read waits for the writer
}

TEST(Chain, ReadAfterWriteRunsTheReaderAfterTheWholeWrite) {
  auto x = from_host(iota(kN), Device::cpu());
  Tensor<float, 1> y;
  {
    CpuQueueHold hold;
    auto [h, x1] = twice(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
    auto [out, h1] =
        plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), std::move(h).unpartition())
            .chain();
    y = std::move(out).unpartition();
  }
  EXPECT_EQ(y.to_vector(), mapped(iota(kN), 2, 1));
}

TEST(Chain, WriteAfterReadRunsTheWriterAfterThePendingRead) {
  auto x = from_host(iota(kN), Device::cpu());
  Tensor<float, 1> copied, overwritten;
  {
    CpuQueueHold hold;
    // The reader hands x back at once, its read still pending; the caller drops its own copy.
    auto [c, x1] = plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
    x = Tensor<float, 1>();
    // A pending read is not a handle: x1 is the only one, so it may be partitioned, and the
    // launch that writes it runs after the read.
    EXPECT_EQ(x1.handle().use_count(), 1);
    auto [w, v] = set_to(std::move(x1).partition({64}), 7.0f).chain();
    copied = std::move(c).unpartition();
    overwritten = std::move(w).unpartition();
  }
  EXPECT_EQ(copied.to_vector(), mapped(iota(kN), 1, 1));  // read before the write
  EXPECT_EQ(overwritten.to_vector(), std::vector<float>(kN, 7.0f));
}

// Reads x n times per block (x * 0.5 + x * 0.5 is x exactly): a reader that stays running a while.
TESSERA_KERNEL(slow_copy, Out<float> z, In<float> x, Scalar<int32_t> n) {
  Tile<float> acc = load_like(x, z);
  for_range(0, n, [&](Index) { acc = acc * 0.5f + load_like(x, z) * 0.5f; });
  z.store(acc);
};
// Reads x's first 64 elements: a reader that finishes at once.
TESSERA_KERNEL(head_copy, Out<float> z, In<float> x) {
  z.store(load(x, {0}, {64}));
};

// A storage's list of pending readers is pruned lazily (readers known to be done at once, the
// others asked only when the list has doubled): a write after many reads -- some finished and
// waited for, a slow one first in the queue, many pending across several prunes -- still runs
// after every one of them.
TEST(Chain, WriteAfterManyPendingReadsRunsAfterEveryOneOfThem) {
  auto x = from_host(iota(kN), Device::cpu());
  std::vector<Tensor<float, 1>> copies;
  auto read_x = [&] {
    auto [c, x1] = head_copy(zeros<float>({64}, Device::cpu()).partition({64}), x).chain();
    copies.push_back(std::move(c).unpartition());
  };
  const std::vector<float> head = iota(64);
  {
    CpuQueueHold hold;
    for (int i = 0; i < 10; ++i) read_x();
  }
  for (const Tensor<float, 1>& c : copies) (void)c.to_vector();  // these are known to be done
  Tensor<float, 1> slow, overwritten;
  {
    CpuQueueHold hold;
    {
      auto [s, x1, n] = slow_copy(zeros<float>({kN}, Device::cpu()).partition({64}), x, 64).chain();
      slow = std::move(s).unpartition();
    }
    for (int i = 0; i < 45; ++i) read_x();  // past several prunes, none of these finished
    Tensor<float, 1> only = std::move(x);
    auto [w, v] = set_to(std::move(only).partition({64}), 7.0f).chain();
    overwritten = std::move(w).unpartition();
  }
  EXPECT_EQ(slow.to_vector(), iota(kN));
  for (const Tensor<float, 1>& c : copies) EXPECT_EQ(c.to_vector(), head);
  EXPECT_EQ(overwritten.to_vector(), std::vector<float>(kN, 7.0f));
}

TEST(Chain, WriteAfterWriteLeavesTheLaterLaunchsValues) {
  auto x = from_host(iota(kN), Device::cpu());
  Tensor<float, 1> out;
  {
    CpuQueueHold hold;
    auto [p, x1] = twice(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
    auto [q, v] = set_to(std::move(p), 5.0f).chain();
    out = std::move(q).unpartition();
  }
  EXPECT_EQ(out.to_vector(), std::vector<float>(kN, 5.0f));
}

TEST(Chain, ThenPassesThePendingArgumentsToTheNextLaunch) {
  auto x = from_host(iota(kN), Device::cpu());
  auto [z, h] = twice(zeros<float>({kN}, Device::cpu()).partition({64}), x)
                    .then([](auto h_out, auto) {
                      return plus_one(zeros<float>({kN}, Device::cpu()).partition({64}),
                                      std::move(h_out).unpartition());
                    })
                    .sync();
  EXPECT_EQ(std::move(z).unpartition().to_vector(), mapped(iota(kN), 2, 1));
}

TEST(Chain, DroppingAChainsTensorsWhileItsWorkIsQueuedKeepsTheMemoryAlive) {
  // The output is caller memory: once the tensor is gone the caller may free it, so the storage's
  // end waits for the launch that writes it.
  std::vector<float> buffer(kN, -1.0f);
  auto x = from_host(iota(kN), Device::cpu());
  {
    auto [z, x1] = twice(wrap_unowned_unchecked(buffer.data(), {kN}).partition({64}), x).chain();
  }  // every handle gone, the work perhaps not started
  EXPECT_EQ(buffer, mapped(iota(kN), 2, 0));
}

TEST(Chain, UncheckedDataOfAPendingOutputWaitsForItsWriter) {
  auto x = from_host(iota(kN), Device::cpu());
  auto [z, x1] = twice(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  const Tensor<float, 1> t = std::move(z).unpartition();
  const float* p = t.unchecked_data();
  EXPECT_EQ(std::vector<float>(p, p + kN), mapped(iota(kN), 2, 0));
}

// The launch path asks earlier launches whether they finished on every launch; on a GPU,
// collecting a launch's result reads its error report from the device, which must not happen
// there.
class DoneWork final : public runtime::DeviceWork {
 public:
  explicit DoneWork(int& waits) : waits_(waits) {}
  bool done() override { return true; }
  void wait() override { ++waits_; }

 private:
  int& waits_;
};

TEST(Chain, AskingWhetherAnEarlierLaunchFinishedDoesNotCollectItsResult) {
  int waits = 0;
  const runtime::Completion c(std::make_unique<DoneWork>(waits));
  EXPECT_TRUE(c.finished());
  EXPECT_FALSE(c.known_succeeded());  // finished, but not known to have succeeded
  EXPECT_EQ(waits, 0);
  c.wait();  // collecting it is what asks the work's result
  EXPECT_EQ(waits, 1);
  EXPECT_TRUE(c.known_succeeded());
}

// ---- attacks through a chain -----------------------------------------------------------------

const std::string kShared =
    "partition() needs the only handle to the tensor's storage, but 2 handles share it (copies, "
    "views, or launches still reading it); drop the other handles, or sync the launches, first";

TEST(ChainAttack, PartitioningAPendingInputWhileTheCallerKeepsACopyIsRefused) {
  auto x = from_host(iota(kN), Device::cpu());
  auto [c, x1] = plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(x1).partition({64}); })),
            kShared);
  // The twin: once the caller's copy is gone, the write is ordered after the pending read.
  x = Tensor<float, 1>();
  auto [w, v] = set_to(std::move(x1).partition({64}), 3.0f).sync();
  EXPECT_EQ(std::move(c).unpartition().to_vector(), mapped(iota(kN), 1, 1));
  EXPECT_EQ(std::move(w).unpartition().to_vector(), std::vector<float>(kN, 3.0f));
}

TEST(ChainAttack, PendingOutputAsBothInputAndOutputOfTheNextLaunchIsRefused) {
  auto x = from_host(iota(kN), Device::cpu());
  auto [p, x1] = twice(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  Tensor<float, 1> t = std::move(p).unpartition();
  Tensor<float, 1> reader = t;  // kept to read t while writing it
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({64}); })),
            kShared);
  // The twin: reading it into a new output works, in order.
  auto [q, r] = plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), reader).sync();
  EXPECT_EQ(std::move(q).unpartition().to_vector(), mapped(iota(kN), 2, 1));
}

TEST(ChainAttack, AChainedFutureOwnsNothing) {
  auto x = from_host(iota(kN), Device::cpu());
  auto f = twice(zeros<float>({kN}, Device::cpu()).partition({64}), x);
  auto [p, x1] = std::move(f).chain();
  const std::string m = error_of<OwnershipError>(
      [&] { (void)std::move(f).sync(); });  // NOLINT(bugprone-use-after-move): the attack
  EXPECT_EQ(m,
            "this Future was moved from, synced or chained, and owns nothing; use the arguments "
            "its sync() or chain() returned");
  // The twin: what chain() returned is the result.
  EXPECT_EQ(std::move(p).unpartition().to_vector(), mapped(iota(kN), 2, 0));
}

TEST(ChainAttack, EscapedPendingOutputCannotBeWrittenByALaterLaunch) {
  auto x = from_host(iota(kN), Device::cpu());
  auto [p, x1] = twice(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  Tensor<float, 1> t = std::move(p).unpartition();
  (void)t.unchecked_data();  // waits for the writer, then marks the storage escaped
  EXPECT_EQ(
      after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({64}); })),
      "partition() needs the only handle to the tensor's storage, but its address was handed out "
      "by unchecked_data(), and a raw pointer is a handle the checks cannot count; kernels may "
      "read this tensor but not write it: partition a copy instead, "
      "t.to(t.device()).partition(tile)");
  // The twin: a later launch may still read it.
  auto [q, r] = plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), t).sync();
  EXPECT_EQ(std::move(q).unpartition().to_vector(), mapped(iota(kN), 2, 1));
}

// ---- errors through a chain ------------------------------------------------------------------

const std::string kBounds =
    "unpadded load from 'x' at tile [1024] of shape [64] reaches element 65536 along axis 0, "
    "outside the tensor's extent 65536; load with padding (the default) to read past the edge";

TEST(ChainError, ALaunchAfterAFailedOneFailsWithALaunchErrorQuotingIt) {
  auto x = from_host(iota(kN), Device::cpu());
  auto [bad, x1] = next_tile(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  auto f =
      plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), std::move(bad).unpartition());
  const std::string m = error_of<LaunchError>([&] { (void)std::move(f).sync(); });
  EXPECT_EQ(without_locations(m),
            "kernel 'plus_one' was ordered after a launch of kernel 'next_tile' that writes "
            "memory it reads or writes, and that launch failed, so this one's results hold "
            "nothing valid: \"" +
                kBounds +
                "\". Fix the first launch, or wait() for it before launching work that uses its "
                "results");
  EXPECT_NE(m.find("unpadded load from 'x'"), std::string::npos);
  // The twin: the same chain over an x long enough for the last block's read.
  auto longer = from_host(iota(kN + 64), Device::cpu());
  auto [good, l1] = next_tile(zeros<float>({kN}, Device::cpu()).partition({64}), longer).chain();
  auto [z, g] =
      plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), std::move(good).unpartition())
          .sync();
  std::vector<float> expected = iota(kN + 64);
  expected.erase(expected.begin(), expected.begin() + 64);
  EXPECT_EQ(std::move(z).unpartition().to_vector(), mapped(expected, 1, 1));
}

TEST(ChainError, AHostReadOfAFailedPendingOutputThrowsItsError) {
  auto x = from_host(iota(kN), Device::cpu());
  auto [bad, x1] = next_tile(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  const Tensor<float, 1> t = std::move(bad).unpartition();
  EXPECT_EQ(after_location(error_of<BoundsError>([&] { (void)t.to_vector(); })), kBounds);
}

TEST(ChainError, AFailedChainDroppedUnseenIsKeptAsALostError) {
  auto x = from_host(iota(kN), Device::cpu());
  {
    auto [bad, x1] = next_tile(zeros<float>({kN}, Device::cpu()).partition({64}), x).chain();
  }  // the failed output is freed, its error unseen; check_lost_errors() waits for the launch
  const std::string m = error_of<LostLaunchError>([] { check_lost_errors(); });
  EXPECT_EQ(without_locations(m),
            "a launch of kernel 'next_tile' failed, and its Future was chained and the memory it "
            "wrote freed unread, so nobody saw its error: \"" +
                kBounds +
                "\"; call sync() or wait() on every Future to get its error where it "
                "happens");
  // The twin: once thrown, it is forgotten, and launches run.
  EXPECT_NO_THROW(check_lost_errors());
  auto [out, in] = plus_one(zeros<float>({kN}, Device::cpu()).partition({64}), x).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), mapped(iota(kN), 1, 1));
}

TEST(ChainError, AFailedChainDroppedAfterItFinishedRefusesTheThreadsNextLaunch) {
  auto x = from_host(iota(kN), Device::cpu());
  {
    auto f = next_tile(zeros<float>({kN}, Device::cpu()).partition({64}), x);
    while (!f.ready()) std::this_thread::yield();  // ready() sees the failure but not its error
    auto [bad, x1] = std::move(f).chain();
  }
  auto z = zeros<float>({kN}, Device::cpu()).partition({64});
  const std::string m = error_of<LostLaunchError>([&] { (void)plus_one(std::move(z), x); });
  EXPECT_EQ(without_locations(m),
            "a launch of kernel 'next_tile' failed, and its Future was chained and the memory it "
            "wrote freed unread, so nobody saw its error: \"" +
                kBounds +
                "\". This launch was refused before it took its arguments, which the caller "
                "keeps; call sync() or wait() on every Future to get its error where it happens");
  // The twin: the refused launch kept its arguments, and runs.
  auto [out, in] = plus_one(std::move(z), x).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), mapped(iota(kN), 1, 1));
}

}  // namespace
}  // namespace tessera::test

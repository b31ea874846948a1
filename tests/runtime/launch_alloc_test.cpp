// Heap allocations on the host's launch path, counted by replacing the global operator new in this
// test binary (its own executable, so no other test is counted). Counted per thread: what the
// calling thread allocates to issue work, not what the CPU backend's workers allocate to run it.
// Each test prints the counts, so the next person knows where the launch path stands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include <tessera/runtime/graph.hpp>
#include <tessera/tessera.hpp>

#include "runtime/cpu_queue.hpp"

namespace {
thread_local long t_allocations = 0;

void* allocate(std::size_t n, std::size_t align) {
  ++t_allocations;
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t)
                ? std::aligned_alloc(align, (n + align - 1) / align * align)
                : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t n) {
  return allocate(n, 0);
}
void* operator new[](std::size_t n) {
  return allocate(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(alloc_plus_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};

constexpr int64_t kN = 1024;
constexpr int kRepeats = 200;

// A graph of `kernels` dependent launches, ping-ponging between two buffers.
Graph chain_graph(int kernels) {
  Tensor<float, 1> cur = ones<float>({kN}, Device::cpu());
  Partition<float, 1> spare = zeros<float>({kN}, Device::cpu()).partition({kN});
  return capture([&] {
    for (int i = 0; i < kernels; ++i) {
      auto f = alloc_plus_one(std::move(spare), cur);
      cur = Tensor<float, 1>();
      auto [out, in] = std::move(f).sync();
      spare = std::move(in).partition({kN});
      cur = std::move(out).unpartition();
    }
  });
}

// Allocations on this thread per call of f (rounded down), over kRepeats calls after a warm-up
// that is drained (all its work finished) before the measured run: work in flight needs its own
// blocks, which the runtime's pools keep once they were needed.
template <class F, class Drain>
long allocations_per_call(F&& f, Drain&& drain) {
  for (int i = 0; i < kRepeats; ++i) f();
  drain();
  const long before = t_allocations;
  for (int i = 0; i < kRepeats; ++i) f();
  return (t_allocations - before) / kRepeats;
}

// Allocations on this thread over all kRepeats launches made by f. The CPU workers are held during
// the warm-up, so that all of its work is in flight at once, and it is twice as long as the
// measured run: the pools then hold more blocks than the measured run can need (its launches in
// flight, and finished ones that a tensor's list of readers still holds), however fast the
// workers keep up with it.
template <class F, class Drain>
long allocations_in_launches(F&& f, Drain&& drain) {
  {
    const runtime::CpuQueueHold hold;
    for (int i = 0; i < 2 * kRepeats; ++i) f();
  }
  // Drained twice: the second launch drops the finished readers that the input's list still holds
  // (their completions go back to the pool then), which the first could not, since they were still
  // running when it started.
  drain();
  drain();
  const long before = t_allocations;
  for (int i = 0; i < kRepeats; ++i) f();
  return t_allocations - before;
}

// Both graphs write the same two storages: what a replay allocates depends on those (its
// predecessors), not on how many launches it replays.
TEST(LaunchAllocations, AReplayAllocatesAsMuchForSixteenCapturedLaunchesAsForTwo) {
  Graph two = chain_graph(2), sixteen = chain_graph(16);
  const long per_two = allocations_per_call([&] { two.replay(); }, [&] { two.replay().sync(); });
  const long per_sixteen =
      allocations_per_call([&] { sixteen.replay(); }, [&] { sixteen.replay().sync(); });
  two.replay().sync();
  sixteen.replay().sync();
  std::printf("host allocations per replay: %ld (a graph of 2 launches), %ld (of 16)\n", per_two,
              per_sixteen);
  EXPECT_EQ(per_sixteen, per_two);
}

// Counted over all kRepeats launches, not per launch: one allocation every few launches (a
// queue's block, a list that grows) is caught too.
TEST(LaunchAllocations, ARepeatedLaunchAllocatesNothing) {
  auto x = ones<float>({kN}, Device::cpu());
  Partition<float, 1> z = zeros<float>({kN}, Device::cpu()).partition({kN});
  const long allocations = allocations_in_launches(
      [&] {
        auto [z1, x1] = alloc_plus_one(std::move(z), x).chain();
        z = std::move(z1);
      },
      [&] {  // ordered after every launch before it (each writes z)
        auto [z1, x1] = alloc_plus_one(std::move(z), x).sync();
        z = std::move(z1);
      });
  (void)x.to_vector();
  std::printf("host allocations: %ld in %d repeated chained launches (the target is 0)\n",
              allocations, kRepeats);
  // None (26 before session 9, 12 in session 9, 10 in session 10): Shape keeps ranks up to 4
  // inline (the grid, each tensor argument's shape and strides, the Future's input handle); the
  // launch's lists of storages and argument values reuse memory given back by earlier launches
  // (SpareVectors); a Completion holds two predecessors inline; the Completion, the CPU job and a
  // GPU launch's work and error report come from pools (block_pool.hpp); the CPU queue is a ring
  // that keeps its memory.
  EXPECT_EQ(allocations, 0);
}

TEST(LaunchAllocations, AReplayOfEightLaunchesAllocatesLessThanEightLaunchesOfAGraphOfOne) {
  Graph eight = chain_graph(8), one = chain_graph(1);
  const long per_eight =
      allocations_per_call([&] { eight.replay(); }, [&] { eight.replay().sync(); });
  const long per_one = allocations_per_call([&] { one.replay(); }, [&] { one.replay().sync(); });
  eight.replay().sync();
  one.replay().sync();
  std::printf("host allocations per replay: %ld (a graph of 8 launches), %ld (of 1)\n", per_eight,
              per_one);
  EXPECT_LT(per_eight, 8 * std::max(per_one, 1L));
}

}  // namespace
}  // namespace tessera::test

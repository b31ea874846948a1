// Class 2 of issue 10: SIMT witnesses and slots forged or shared. Kernel code runs here on
// simulated registers (each thread a SimulatedThread, as in tests/simt/witness_test.cpp), so the
// attacks below are the ones a kernel body can write -- memcpy of a witness's or a Slot's bytes,
// a union, bytes passed through "shared memory" from another thread -- and the property each one
// tries to break is checked: a thread writes its own element, and nothing else. (The same attacks
// run on the GPU in gpu_attack_test.cpp.) Each attack has its honest twin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "tessera/simt/kernel.hpp"

namespace tessera::simt {
namespace {

using detail::HardwareIds;
using detail::SimulatedThread;
using detail::SpanAccess;

// Thread x of a 1-D launch of one 64-thread block.
HardwareIds thread(unsigned x) {
  return {{x, 0, 0}, {0, 0, 0}, {64, 1, 1}, {1, 1, 1}};
}

template <class W>
W token() {
  return SimulatedThread::witness<W>();
}

// An object of type T made from bytes, as an attacker would (the byte-level copy C++ allows; the
// memcpy calls below are the attacks, so clang-tidy's warning about them is silenced line by line).
template <class T>
struct Forged {
  alignas(T) unsigned char bytes[sizeof(T)];
  const T& get() const { return *std::launder(reinterpret_cast<const T*>(bytes)); }
};

TEST(WitnessAttack, AWitnessCopiedThroughSharedMemoryNamesOnlyTheCopiersElement) {
  std::vector<float> data(64, 0);
  const auto out = SpanAccess::output<Index1D>(data.data(), 64);
  unsigned char shared[sizeof(Index1D)];  // "shared memory"
  {
    const SimulatedThread t3(thread(3));
    const Index1D w = token<Index1D>();
    // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
    std::memcpy(shared, std::addressof(w), sizeof w);
  }
  {
    const SimulatedThread t9(thread(9));
    Forged<Index1D> forged;
    // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
    std::memcpy(forged.bytes, shared, sizeof shared);
    EXPECT_EQ(forged.get().value(), 9);
    if (auto o = out.at(forged.get())) *o = 1.0f;
  }
  EXPECT_EQ(data[3], 0.0f) << "thread 9 wrote thread 3's element through its copied witness";
  EXPECT_EQ(data[9], 1.0f);
  // The twin: thread 9's own witness names the same element.
  const SimulatedThread t9(thread(9));
  EXPECT_EQ(token<Index1D>().value(), 9);
}

TEST(WitnessAttack, AWitnessHoldsNoBytesToForge) {
  EXPECT_TRUE(std::is_empty_v<Index1D>);
  EXPECT_TRUE(std::is_empty_v<Index2D>);
  EXPECT_TRUE(std::is_empty_v<WarpIndex1D>);
  EXPECT_TRUE((std::is_empty_v<TileIndex2D<64, 64, 4, 4>>));
}

// A union whose witness member was never constructed: the bytes of anything.
union PunnedIndex {
  unsigned char raw[16];
  Index1D w;
  PunnedIndex() : raw{} {}
};

TEST(WitnessAttack, AUnionPunnedWitnessNamesOnlyTheCallersElement) {
  std::vector<int> data(64, 0);
  const auto out = SpanAccess::output<Index1D>(data.data(), 64);
  const SimulatedThread t5(thread(5));
  PunnedIndex pun;
  for (unsigned char& b : pun.raw) b = 0xff;  // whatever "index" the bytes could spell
  if (auto o = out.at(pun.w)) *o = 7;
  EXPECT_EQ(data, [] {
    std::vector<int> want(64, 0);
    want[5] = 7;
    return want;
  }());
}

TEST(WitnessAttack, ASlotCopiedFromAnotherThreadWritesOnlyTheCopiersElement) {
  std::vector<float> data(64, 0);
  const auto out = SpanAccess::output<Index1D>(data.data(), 64);
  using S = decltype(out.at(std::declval<const Index1D&>()));
  unsigned char shared[sizeof(S)];
  {
    const SimulatedThread t3(thread(3));
    const auto slot = out.at(token<Index1D>());
    // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
    std::memcpy(shared, std::addressof(slot), sizeof slot);
  }
  {
    const SimulatedThread t9(thread(9));
    Forged<S> forged;
    // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
    std::memcpy(forged.bytes, shared, sizeof shared);
    ASSERT_TRUE(forged.get());
    *forged.get() = 2.0f;
    forged.get().store(forged.get().load() + 1.0f);
  }
  EXPECT_EQ(data[3], 0.0f) << "thread 9 wrote thread 3's element through its copied Slot";
  EXPECT_EQ(data[9], 3.0f);
}

TEST(WitnessAttack, AWarpSlotCopiedToAnotherLaneWritesNothing) {
  std::vector<float> data(4, 0);
  const auto out = SpanAccess::output<WarpIndex1D>(data.data(), 4);
  using S = decltype(out.at(std::declval<const WarpIndex1D&>()));
  unsigned char shared[sizeof(S)];
  {
    const SimulatedThread lane0(thread(32));  // lane 0 of warp 1: owns element 1
    const auto slot = out.at(token<WarpIndex1D>());
    ASSERT_TRUE(slot);
    // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
    std::memcpy(shared, std::addressof(slot), sizeof slot);
  }
  const SimulatedThread lane5(thread(37));  // lane 5 of warp 1: owns nothing
  Forged<S> forged;
  // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
  std::memcpy(forged.bytes, shared, sizeof shared);
  EXPECT_FALSE(forged.get());
  EXPECT_DEATH(forged.get().store(1.0f), "");
  EXPECT_EQ(data, std::vector<float>(4, 0.0f));
}

// The micro-tile position (r, c) is the one thing a Slot of a TileIndex2D keeps; overwriting it
// to reach past the micro-tile makes the write stop the kernel instead.
TEST(WitnessAttackDeathTest, ATileSlotWhosePositionWasOverwrittenStopsTheKernel) {
  using Tile = TileIndex2D<4, 4, 2, 2>;  // blocks of 2 x 2 threads, 2 x 2 elements each
  std::vector<int> data(16, 0);
  const auto out = SpanAccess::output2d<Tile>(data.data(), 4, 4, 4);
  const SimulatedThread t0({{0, 0, 0}, {0, 0, 0}, {2, 2, 1}, {2, 2, 1}});
  const Tile t = token<Tile>();
  using S = decltype(out.at(t, 0, 0));
  const auto slot = out.at(t, 1, 1);  // the twin: inside the micro-tile
  ASSERT_TRUE(slot);
  *slot = 5;
  EXPECT_EQ(data[1 * 4 + 1], 5);
  Forged<S> forged;
  // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
  std::memcpy(forged.bytes, std::addressof(slot), sizeof slot);
  const int far_row = 2;  // thread (0, 1)'s micro-tile
  // NOLINTNEXTLINE(bugprone-undefined-memory-manipulation): the attack
  std::memcpy(forged.bytes + sizeof(DisjointSpan2D<int>), &far_row, sizeof far_row);
  EXPECT_FALSE(forged.get());
  EXPECT_DEATH(forged.get().store(9), "");
  EXPECT_EQ(data[2 * 4 + 1], 0);
}

// A token of another index space than the kernel's, which only a union or a cast can make,
// would mix two thread-to-element mappings in one launch (Index2D gives thread (0, 1) of a 2 x 2
// block element (1, 0); TileIndex2D<4, 4, 2, 2> gives it to thread (0, 0)). The span knows the
// kernel's witness kind, and at() stops the kernel.
union PunnedTile {
  unsigned char raw[1];
  TileIndex2D<4, 4, 2, 2> t;
  PunnedTile() : raw{} {}
};

TEST(WitnessAttackDeathTest, AWitnessOfAnotherIndexSpaceThanTheKernelsStopsTheKernel) {
  std::vector<int> data(16, 0);
  const auto out = SpanAccess::output2d<Index2D>(data.data(), 4, 4, 4);  // an Index2D kernel
  const SimulatedThread t0({{0, 0, 0}, {0, 0, 0}, {2, 2, 1}, {2, 2, 1}});
  PunnedTile pun;
  EXPECT_DEATH((void)static_cast<bool>(out.at(pun.t, 1, 0)), "");
  // The twin: the kernel's own witness.
  if (auto o = out.at(token<Index2D>())) *o = 4;
  EXPECT_EQ(data[0], 4);
  EXPECT_EQ(std::count(data.begin(), data.end(), 0), 15);
}

TEST(WitnessAttack, UncheckedLoadsReturnValuesNotReferences) {
  const std::vector<float> v = {1, 2, 3};
  const auto x = SpanAccess::input(v.data(), 3);
  static_assert(std::is_same_v<decltype(x.load_unchecked(1)), float>);
  const auto m = SpanAccess::input2d(v.data(), 1, 3, 3);
  static_assert(std::is_same_v<decltype(m.load_unchecked(0, 1)), float>);
  EXPECT_EQ(x.load_unchecked(1), 2.0f);
}

TEST(WitnessAttack, SpansAreNotTriviallyCopyableSoBitCastRefusesThem) {
  // std::bit_cast needs both types trivially copyable (the compile-fail twin bit_cast_span.cpp
  // pins the error).
  EXPECT_FALSE(std::is_trivially_copyable_v<DisjointSpan<float>>);
  EXPECT_FALSE(std::is_trivially_copyable_v<DisjointSpan2D<float>>);
  EXPECT_FALSE(std::is_trivially_copyable_v<Span<const float>>);
  EXPECT_FALSE(std::is_trivially_copyable_v<Span2D<const float>>);
}

}  // namespace
}  // namespace tessera::simt

// Witnesses and spans on simulated registers: every thread of a launch runs as a SimulatedThread
// with the token the kernel entry would give it, and the elements each thread can reach through a
// DisjointSpan are collected. The property under test is the product's: no element is reachable by
// two threads, and a launch that covers the output reaches every element.
#include <gtest/gtest.h>

#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/simt/kernel.hpp"

namespace tessera::simt {
namespace {

using detail::HardwareIds;
using detail::SimulatedThread;
using detail::SpanAccess;

template <class W>
W token() {
  return SimulatedThread::witness<W>();
}

// Calls f(ids) for every thread of a launch of `grid` blocks of `block` threads.
template <class F>
void for_each_thread(Dim3 grid, Dim3 block, F&& f) {
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              const HardwareIds h{{tx, ty, tz}, {bx, by, bz}, block, grid};
              const SimulatedThread thread(h);
              f(h);
            }
}

// Which thread (as a flat id) reached each element; -1: none. Fails on a second writer.
class Owners {
 public:
  explicit Owners(size_t n) : owner_(n, -1) {}
  void claim(const void* base, const void* element, size_t elem_size, long thread) {
    const auto offset = static_cast<const char*>(element) - static_cast<const char*>(base);
    const size_t index = static_cast<size_t>(offset) / elem_size;
    ASSERT_LT(index, owner_.size()) << "a slot outside the span";
    EXPECT_EQ(owner_[index], -1) << "element " << index << " is reachable by threads "
                                 << owner_[index] << " and " << thread;
    owner_[index] = thread;
  }
  long unowned() const {
    long n = 0;
    for (long o : owner_) n += o == -1;
    return n;
  }

 private:
  std::vector<long> owner_;
};

long thread_id(const HardwareIds& h) {
  const long block =
      (static_cast<long>(h.block.z) * h.grid_dim.y + h.block.y) * h.grid_dim.x + h.block.x;
  return (block * h.block_dim.z + h.thread.z) * h.block_dim.y * h.block_dim.x +
         h.thread.y * h.block_dim.x + h.thread.x;
}

// The slot's element address, read by writing through it: the Slot gives out no pointer.
template <class T, class S>
const T* element_of(T* base, long size, const S& slot) {
  if (!slot) return nullptr;
  const T old = slot.load();
  slot.store(T(-7));
  const T* found = nullptr;
  for (long j = 0; j < size; ++j)
    if (base[j] == T(-7)) found = base + j;
  slot.store(old);
  return found;
}

TEST(Witness, OneDimensionalLaunchGivesEachElementToExactlyOneThread) {
  const long n = 1000;  // not a multiple of the block: the last block has idle threads
  std::vector<float> data(n, 0);
  const auto out = SpanAccess::output<Index1D>(data.data(), n);
  Owners owners(n);
  for_each_thread({8, 1, 1}, {128, 1, 1}, [&](const HardwareIds& h) {
    ASSERT_TRUE(detail::fits<Index1D>(h.grid_dim, h.block_dim));
    const Index1D i = token<Index1D>();
    const auto s = out.at(i);
    EXPECT_EQ(static_cast<bool>(s), i.value() < n);
    if (s) owners.claim(data.data(), element_of(data.data(), n, s), sizeof(float), thread_id(h));
  });
  EXPECT_EQ(owners.unowned(), 0);
}

TEST(Witness, TwoDimensionalLaunchGivesEachElementToExactlyOneThread) {
  const long rows = 37, cols = 50, pitch = 64;  // ragged edges, and a pitch wider than a row
  std::vector<int> data(rows * pitch, 0);
  const auto out = SpanAccess::output2d<Index2D>(data.data(), rows, cols, pitch);
  Owners owners(rows * pitch);
  for_each_thread({4, 10, 1}, {16, 4, 1}, [&](const HardwareIds& h) {
    const Index2D w = token<Index2D>();
    const auto s = out.at(w);
    EXPECT_EQ(static_cast<bool>(s), w.row() < rows && w.col() < cols);
    if (s)
      owners.claim(data.data(), element_of(data.data(), rows * pitch, s), sizeof(int),
                   thread_id(h));
  });
  EXPECT_EQ(owners.unowned(), rows * (pitch - cols));  // only the padding past each row
}

TEST(Witness, TileWitnessGivesEachThreadItsOwnMicroTile) {
  using Tile = TileIndex2D<16, 32, 4, 8>;  // blocks of (32 / 8, 16 / 4) = (4, 4) threads
  const long rows = 40, cols = 70;
  std::vector<int> data(rows * cols, 0);
  const auto out = SpanAccess::output2d<Tile>(data.data(), rows, cols, cols);
  Owners owners(rows * cols);
  for_each_thread({3, 3, 1}, {Tile::kBlockX, Tile::kBlockY, 1}, [&](const HardwareIds& h) {
    ASSERT_TRUE(detail::fits<Tile>(h.grid_dim, h.block_dim));
    const Tile t = token<Tile>();
    // Local coordinates past the micro-tile give nothing, whatever the matrix holds there.
    EXPECT_FALSE(out.at(t, 4, 0));
    EXPECT_FALSE(out.at(t, 0, 8));
    EXPECT_FALSE(out.at(t, -1, 0));
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 8; ++c)
        if (const auto s = out.at(t, r, c))
          owners.claim(data.data(), element_of(data.data(), rows * cols, s), sizeof(int),
                       thread_id(h));
  });
  EXPECT_EQ(owners.unowned(), 0);
}

TEST(Witness, WarpWitnessGivesEachElementToLaneZeroOfOneWarp) {
  const long n = 10;
  std::vector<float> data(n, 0);
  const auto out = SpanAccess::output<WarpIndex1D>(data.data(), n);
  Owners owners(n);
  for_each_thread({2, 1, 1}, {192, 1, 1}, [&](const HardwareIds& h) {
    const WarpIndex1D w = token<WarpIndex1D>();
    const auto s = out.at(w);
    EXPECT_EQ(static_cast<bool>(s), w.lane() == 0 && w.warp() < n);
    if (s) owners.claim(data.data(), element_of(data.data(), n, s), sizeof(float), thread_id(h));
  });
  EXPECT_EQ(owners.unowned(), 0);
}

TEST(Witness, LaunchShapesThatWouldRepeatAWitnessDoNotFit) {
  // A 1-D witness under a 2-D block: threads (x, 0) and (x, 1) would both get element x.
  EXPECT_FALSE(detail::fits<Index1D>({4, 1, 1}, {32, 2, 1}));
  EXPECT_FALSE(detail::fits<Index1D>({4, 2, 1}, {32, 1, 1}));
  EXPECT_FALSE(detail::fits<WarpIndex1D>({4, 1, 1}, {32, 1, 2}));
  EXPECT_FALSE(detail::fits<Index2D>({4, 4, 2}, {8, 8, 1}));
  EXPECT_FALSE(detail::fits<Index2D>({4, 4, 1}, {8, 8, 2}));
  // A tile witness under any block shape but its own: micro-tiles would overlap or leave gaps.
  EXPECT_FALSE((detail::fits<TileIndex2D<32, 32, 4, 4>>({2, 2, 1}, {16, 8, 1})));
  EXPECT_TRUE((detail::fits<TileIndex2D<32, 32, 4, 4>>({2, 2, 1}, {8, 8, 1})));
  EXPECT_TRUE(detail::fits<Index2D>({4, 4, 1}, {8, 8, 1}));
  EXPECT_TRUE(detail::fits<Index1D>({4, 1, 1}, {1024, 1, 1}));
}

TEST(Witness, AThreadOfAShapeThatDoesNotFitOwnsNothing) {
  // What a thread's witness gives under such a shape (before the entry stops the kernel): no
  // thread can write anything, so the repeated elements cannot race.
  std::vector<float> data(4096, 0);
  const auto flat = SpanAccess::output<Index1D>(data.data(), 4096);
  const auto warps = SpanAccess::output<WarpIndex1D>(data.data(), 4096);
  const auto grid = SpanAccess::output2d<Index2D>(data.data(), 64, 64, 64);
  const auto tiles = SpanAccess::output2d<TileIndex2D<8, 8, 2, 2>>(data.data(), 64, 64, 64);
  long owned = 0;
  for_each_thread({2, 2, 1}, {32, 2, 2}, [&](const HardwareIds&) {
    owned += static_cast<bool>(flat.at(token<Index1D>()));
    owned += static_cast<bool>(warps.at(token<WarpIndex1D>()));
    owned += static_cast<bool>(grid.at(token<Index2D>()));
    const auto t = token<TileIndex2D<8, 8, 2, 2>>();
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) owned += static_cast<bool>(tiles.at(t, r, c));
  });
  EXPECT_EQ(owned, 0);
}

TEST(Witness, WitnessesSlotsAndSpansAreNotTriviallyCopyable) {
  // A witness holds nothing; a span is not trivially copyable so that std::bit_cast cannot turn
  // it into a struct with a pointer (or a struct into a span).
  EXPECT_FALSE(std::is_trivially_copyable_v<Index1D>);
  EXPECT_FALSE(std::is_trivially_copyable_v<Index2D>);
  EXPECT_FALSE(std::is_trivially_copyable_v<WarpIndex1D>);
  EXPECT_FALSE((std::is_trivially_copyable_v<TileIndex2D<8, 8, 1, 1>>));
  EXPECT_TRUE(std::is_empty_v<Index1D>);
  EXPECT_TRUE((std::is_empty_v<TileIndex2D<8, 8, 1, 1>>));
  EXPECT_FALSE((std::is_trivially_copyable_v<Slot<float, DisjointSpan<float>, Index1D>>));
  EXPECT_FALSE((std::is_trivially_copyable_v<ElementRef<float, DisjointSpan<float>, Index1D>>));
  EXPECT_FALSE(std::is_trivially_copyable_v<DisjointSpan<float>>);
  EXPECT_FALSE(std::is_trivially_copyable_v<DisjointSpan2D<float>>);
  EXPECT_FALSE(std::is_trivially_copyable_v<Span<const float>>);
  EXPECT_FALSE(std::is_trivially_copyable_v<Span2D<const double>>);
}

TEST(Witness, IndicesFollowTheHardwareRegisters) {
  {
    const SimulatedThread thread(HardwareIds{{5, 0, 0}, {7, 0, 0}, {32, 1, 1}, {10, 1, 1}});
    EXPECT_EQ(token<Index1D>().value(), 7 * 32 + 5);
  }
  {
    const SimulatedThread thread(HardwareIds{{5, 3, 0}, {7, 2, 0}, {32, 8, 1}, {10, 4, 1}});
    const Index2D w = token<Index2D>();
    EXPECT_EQ(w.row(), 2 * 8 + 3);
    EXPECT_EQ(w.col(), 7 * 32 + 5);
  }
  {
    const SimulatedThread thread(HardwareIds{{5, 3, 0}, {7, 2, 0}, {8, 8, 1}, {10, 4, 1}});
    const auto t = token<TileIndex2D<64, 32, 8, 4>>();
    EXPECT_EQ(t.block_row0(), 2 * 64);
    EXPECT_EQ(t.block_col0(), 7 * 32);
    EXPECT_EQ(t.row0(), 2 * 64 + 3 * 8);
    EXPECT_EQ(t.col0(), 7 * 32 + 5 * 4);
    EXPECT_EQ(t.thread_rank(), 3 * 8 + 5);
  }
  {
    const SimulatedThread thread(HardwareIds{{37, 0, 0}, {3, 0, 0}, {64, 1, 1}, {10, 1, 1}});
    const WarpIndex1D wi = token<WarpIndex1D>();
    EXPECT_EQ(wi.warp(), (3 * 64 + 37) / 32);
    EXPECT_EQ(wi.lane(), (3 * 64 + 37) % 32);
  }
}

}  // namespace
}  // namespace tessera::simt

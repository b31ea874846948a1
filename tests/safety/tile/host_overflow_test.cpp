// Class 3 of issue 10: shape arithmetic that overflows. Element counts, byte sizes, tile sizes and
// tile counts are products of user-given extents; each is computed with overflow-checked
// arithmetic (core/checked.hpp) and an overflow is an error that names the values, before any
// memory is allocated or any block runs. Allocation failures are OutOfMemoryErrors naming the size
// and the device. Each attack has a twin, a size that fits, which runs.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <tessera/core/checked.hpp>
#include <tessera/simt/contract.hpp>
#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TESSERA_KERNEL(copy_tile, Out<float> z, In<float> x) { z.store(load_like(x, z)); };

// ---- element counts and byte sizes ---------------------------------------------------------

// Attack: 2^32 x 2^32 elements is 2^64, which wraps to 0 in 64 bits: the tensor would get a
// 256-byte allocation that kernels then index as 2^64 elements.
TEST(HostOverflow, AnElementCountThatWrapsIsRefusedBeforeAnyAllocation) {
  const std::string m = error_of<UsageError>(
      [] { (void)empty<float>({int64_t{1} << 32, int64_t{1} << 32}, Device::cpu()); });
  EXPECT_EQ(after_location(m),
            "the shape [4294967296, 4294967296] has more elements than a 64-bit count holds; use "
            "smaller extents");
}
// Twin: a shape whose count fits is allocated whole.
TEST(HostOverflow, AnElementCountThatFitsIsAllocatedWhole) {
  auto t = zeros<float>({1 << 10, 1 << 4}, Device::cpu());
  EXPECT_EQ(t.numel(), int64_t{1} << 14);
  EXPECT_EQ(t.to_vector(), std::vector<float>(size_t{1} << 14, 0.0f));
}

// Attack: 2^62 f32 elements fit a count, but 2^64 bytes wrap to 0.
TEST(HostOverflow, AByteSizeThatWrapsIsRefusedNamingTheShapeAndTheElementSize) {
  const std::string m =
      error_of<UsageError>([] { (void)empty<float>({int64_t{1} << 62}, Device::cpu()); });
  EXPECT_EQ(after_location(m),
            "a f32 tensor of shape [4611686018427387904] holds 4611686018427387904 elements of 4 "
            "bytes, more bytes than a 64-bit size holds; use smaller extents");
}

// Attack: from_host with a shape whose wrapped count (0) matches the data given (none): the
// tensor would claim 2^64 elements over an empty buffer, and a kernel would copy heap memory past
// it into its output.
TEST(HostOverflow, FromHostRefusesAShapeWhoseWrappedCountMatchesTheData) {
  const std::vector<float> none;
  const std::string m = error_of<UsageError>([&] {
    (void)from_host<float>(none, {int64_t{1} << 32, int64_t{1} << 32}, Device::cpu());
  });
  EXPECT_EQ(after_location(m),
            "the shape [4294967296, 4294967296] has more elements than a 64-bit count holds; use "
            "smaller extents");
}
// Twin: from_host with a shape that matches its data.
TEST(HostOverflow, FromHostWithAMatchingShapeHoldsTheData) {
  const std::vector<float> six{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(from_host<float>(six, {2, 3}, Device::cpu()).to_vector(), six);
}

// Attack: wrapping caller memory with a shape whose byte size wraps.
TEST(HostOverflow, WrappingMemoryWithAShapeWhoseBytesWrapIsRefused) {
  float buffer[4] = {};
  const std::string m = error_of<UsageError>(
      [&] { (void)wrap_unowned_unchecked(buffer, {int64_t{1} << 62}, Device::cpu()); });
  EXPECT_EQ(after_location(m),
            "a f32 tensor of shape [4611686018427387904] holds 4611686018427387904 elements of 4 "
            "bytes, more bytes than a 64-bit size holds; use smaller extents");
}

// Attack: arange with a negative count would ask std::vector for 2^64 - 1 elements.
TEST(HostOverflow, ArangeOfANegativeCountIsAUsageErrorAtTheCall) {
  const int line = __LINE__ + 1;
  const std::string m = error_of<UsageError>([] { (void)arange<float>(-1, Device::cpu()); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", line));
  EXPECT_EQ(after_location(m), "arange(-1): the count is negative; pass n >= 0");
}
// Twin: arange of zero is an empty tensor.
TEST(HostOverflow, ArangeOfZeroIsEmpty) {
  EXPECT_EQ(arange<float>(0, Device::cpu()).numel(), 0);
}

// ---- allocation failure --------------------------------------------------------------------

// Attack: 2^60 f32 elements (4 EiB) fit every count, but no machine has the memory: an
// OutOfMemoryError naming the size and the device, not a null pointer or std::bad_alloc.
TEST(HostOverflow, AnAllocationTheHostCannotMakeIsAnOutOfMemoryErrorNamingSizeAndDevice) {
  const std::string m =
      error_of<OutOfMemoryError>([] { (void)empty<float>({int64_t{1} << 60}, Device::cpu()); });
  EXPECT_EQ(after_location(m),
            "out of memory: 4611686018427387904 bytes could not be allocated on cpu; use smaller "
            "tensors, or free some first");
}
TEST(HostOverflow, OutOfMemoryIsABackendError) {
  EXPECT_THROW((void)empty<float>({int64_t{1} << 60}, Device::cpu()), BackendError);
}

// ---- tile sizes ----------------------------------------------------------------------------

// Attack: a tile of 2^32 x 2^32 elements wraps to 0 elements: a block would hold and store
// nothing, and the output keep stale contents.
TEST(HostOverflow, APartitionWhoseTileSizeWrapsIsRefusedAtTheCall) {
  auto t = zeros<float>({4, 4}, Device::cpu());
  const int line = __LINE__ + 2;
  const std::string m = error_of<UsageError>(
      [&] { (void)std::move(t).partition({int64_t{1} << 32, int64_t{1} << 32}); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", line));
  EXPECT_EQ(after_location(m),
            "partition(): tile shape [4294967296, 4294967296] has more than 2147483647 "
            "elements, the most one tile may hold (a tile is one block's working set); use a "
            "smaller tile");
}

// Attack: a tile of INT64_MAX elements. ceil(1000 / INT64_MAX) computed as (a + b - 1) / b wraps
// to a negative count, a grid of no blocks that "succeeds" with the output never written; and a
// block would need INT64_MAX values (std::bad_alloc). Refused where the partition is made.
TEST(HostOverflow, APartitionWithAHugeTileIsRefusedBeforeItsGridIsComputed) {
  auto t = zeros<float>({1000}, Device::cpu());
  const std::string m = error_of<UsageError>([&] { (void)std::move(t).partition({kMax}); });
  EXPECT_EQ(after_location(m),
            "partition(): tile shape [9223372036854775807] has more than 2147483647 elements, "
            "the most one tile may hold (a tile is one block's working set); use a smaller tile");
}
TEST(HostOverflow, CeilDivNearTheTopOfInt64DoesNotWrap) {
  EXPECT_EQ(ceil_div(1000, kMax), 1);
  EXPECT_EQ(ceil_div(kMax, kMax), 1);
  EXPECT_EQ(ceil_div(kMax, 2), kMax / 2 + 1);
  EXPECT_EQ(ceil_div(kMax - 1, 1), kMax - 1);
  EXPECT_EQ(ceil_div(0, 7), 0);
}
// Twin: a tile larger than the tensor is one block that stores the whole (masked) output.
TEST(HostOverflow, ATileLargerThanTheTensorIsOneBlockThatWritesEveryElement) {
  auto x = arange<float>(1000, Device::cpu());
  auto z = full<float>({1000}, -1.0f, Device::cpu()).partition({4096});
  EXPECT_EQ(z.grid(), Shape{1});
  auto [z1, x1] = copy_tile(std::move(z), x).sync();
  EXPECT_EQ(std::move(z1).unpartition().to_vector(), x.to_vector());
}

// Attack: tiles made inside a kernel body, too large to be one block's working set: a Tile of
// 65536 x 65536 elements (2^32; Tile::zeros is the IR's constant op), and the sum of two legal
// tiles whose result would have 2^32 elements.
int g_line = 0;
TESSERA_KERNEL(makes_a_huge_tile, Out<float> z) {
  g_line = __LINE__ + 1;
  Tile<float> big = Tile<float>::zeros({65536, 65536});
  z.store(broadcast(sum(sum(big, 1), 0).reshape({1}), z.shape()));
};
TEST(HostOverflow, AKernelThatMakesAHugeTileIsRefusedAtItsLine) {
  auto z = zeros<float>({8}, Device::cpu()).partition({8});
  const std::string m = error_of<KernelError>([&] { (void)makes_a_huge_tile(std::move(z)); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m),
            "constant makes a tile of shape [65536, 65536], more than 2147483647 elements, the "
            "most one tile may hold (a tile is one block's working set); use a smaller tile");
}
// (A column plus a row broadcasts, numpy-style, to 65536 x 65536: the broadcast is refused.)
TESSERA_KERNEL(adds_into_a_huge_tile, Out<float> z) {
  const Tile<float> column = Tile<float>::full({65536, 1}, 1.0f),
                    row = Tile<float>::full({1, 65536}, 1.0f);
  g_line = __LINE__ + 1;
  Tile<float> outer = column + row;
  z.store(broadcast(sum(sum(outer, 1), 0).reshape({1}), z.shape()));
};
TEST(HostOverflow, AnOpWhoseResultIsAHugeTileIsRefusedAtItsLine) {
  auto z = zeros<float>({8}, Device::cpu()).partition({8});
  const std::string m = error_of<KernelError>([&] { (void)adds_into_a_huge_tile(std::move(z)); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m),
            "broadcast makes a tile of shape [65536, 65536], more than 2147483647 elements, the "
            "most one tile may hold (a tile is one block's working set); use a smaller tile");
}
// Twin: the same body with a small tile runs and sums it.
TESSERA_KERNEL(makes_a_small_tile, Out<float> z) {
  Tile<float> small = Tile<float>::full({64, 32}, 1.0f);
  z.store(broadcast(sum(sum(small, 1), 0).reshape({1}), z.shape()));
};
TEST(HostOverflow, AKernelThatMakesASmallTileRunsIt) {
  auto z = zeros<float>({8}, Device::cpu()).partition({8});
  auto [z1] = makes_a_small_tile(std::move(z)).sync();
  EXPECT_EQ(std::move(z1).unpartition().to_vector(), std::vector<float>(8, 64.0f * 32.0f));
}

// Attack: a tile within the limit that the host still cannot hold (the CPU backend keeps 16 bytes
// an element). In a child process whose address space is capped, a 2^27-element tile (2 GiB)
// cannot be allocated: the launch's error is an OutOfMemoryError naming the tile, its size and the
// device, at the kernel's line, not std::bad_alloc.
TESSERA_KERNEL(holds_a_large_tile, Out<float> z) {
  g_line = __LINE__ + 1;
  Tile<float> large = Tile<float>::zeros({int64_t{1} << 27});
  z.store(broadcast(sum(large, 0), z.shape()));
};
// The address space this process has mapped, from /proc/self/statm (pages).
rlim_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  unsigned long long pages = 0;
  statm >> pages;
  return static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE));
}
void run_large_tile_under_a_memory_cap() {
  auto z = zeros<float>({8}, Device::cpu()).partition({8});
  const rlim_t cap = mapped_bytes() + (rlim_t{512} << 20);
  const rlimit limit{cap, cap};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
  try {
    (void)holds_a_large_tile(std::move(z)).sync();
  } catch (const OutOfMemoryError& e) {
    const std::string want = tessera::detail::cat(__FILE__, ":", g_line, ":");  // then the column
    const std::string m = e.what();
    const bool at_line = m.rfind(want, 0) == 0;
    const bool text =
        after_location(m) ==
        "kernel 'holds_a_large_tile': out of memory: the CPU backend holds a f32[134217728] tile "
        "(constant) as 134217728 values of 16 bytes, which could not be allocated on cpu; use "
        "smaller tiles";
    std::fprintf(stderr, "%s\n", m.c_str());
    std::fflush(stderr);
    std::_Exit(at_line && text ? 0 : 2);
  } catch (...) {
    std::_Exit(4);
  }
  std::_Exit(5);
}
TEST(HostOverflow, ATileTheHostCannotHoldIsAnOutOfMemoryErrorNamingItsSize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_large_tile_under_a_memory_cap(), ::testing::ExitedWithCode(0),
              "out of memory: the CPU backend holds a f32");
}
// Twin: a 2^16-element tile under the same cap is held, and summed.
TESSERA_KERNEL(holds_a_modest_tile, Out<float> z) {
  Tile<float> modest = Tile<float>::full({int64_t{1} << 16}, 1.0f);
  z.store(broadcast(sum(modest, 0), z.shape()));
};
void run_modest_tile_under_a_memory_cap() {
  auto z = zeros<float>({8}, Device::cpu()).partition({8});
  const rlim_t cap = mapped_bytes() + (rlim_t{512} << 20);
  const rlimit limit{cap, cap};
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::_Exit(3);
  auto [z1] = holds_a_modest_tile(std::move(z)).sync();
  const bool summed = std::move(z1).unpartition().to_vector() == std::vector<float>(8, 65536.0f);
  std::_Exit(summed ? 0 : 2);
}
TEST(HostOverflow, ATileTheHostCanHoldRunsUnderTheSameCap) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(run_modest_tile_under_a_memory_cap(), ::testing::ExitedWithCode(0), "");
}

// ---- SIMT launch sizes ---------------------------------------------------------------------

// Attack: cover(n, block) for n near the top of index_t computed (n + block - 1) / block, which
// overflows (a negative grid). It rounds up without the sum.
TEST(HostOverflow, SimtCoverOfAHugeCountRoundsUpWithoutOverflow) {
  const simt::LaunchConfig<1> c = simt::cover(kMax - 1, 256);
  EXPECT_EQ(c.grid[0], (kMax - 1) / 256 + 1);
  EXPECT_EQ(c.block[0], 256);
}
// Twin: an ordinary count.
TEST(HostOverflow, SimtCoverOfAnOrdinaryCountGivesEnoughBlocks) {
  EXPECT_EQ(simt::cover(1000, 256).grid[0], 4);
  EXPECT_EQ(simt::cover(1024, 256).grid[0], 4);
  EXPECT_EQ(simt::cover(0, 256).grid[0], 0);
}

// ---- the helpers ---------------------------------------------------------------------------

TEST(HostOverflow, CheckedArithmeticReportsOverflowAndOnlyOverflow) {
  EXPECT_EQ(checked_mul(int64_t{1} << 31, int64_t{1} << 31), int64_t{1} << 62);
  EXPECT_FALSE(checked_mul(int64_t{1} << 32, int64_t{1} << 31));
  EXPECT_FALSE(checked_mul(kMax, int64_t{2}));
  EXPECT_EQ(checked_add(kMax - 1, int64_t{1}), kMax);
  EXPECT_FALSE(checked_add(kMax, int64_t{1}));
  EXPECT_FALSE(checked_mul(size_t{1} << 63, size_t{2}));
  EXPECT_EQ(numel({0, int64_t{1} << 40, int64_t{1} << 40}), 0);  // an empty axis empties it
}

}  // namespace
}  // namespace tessera::test

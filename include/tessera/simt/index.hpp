// Thread-index witnesses. A witness is the proof a thread carries that an element (or a group of
// elements) of a DisjointSpan is its own. Only the kernel entry that TESSERA_SIMT_DEFINE writes
// makes one, from the hardware registers (threadIdx, blockIdx, blockDim, gridDim), and hands it to
// the kernel body. Kernel code cannot
//  - forge one: the constructors are private (a public catch-all constructor exists only to say
//    so in a static_assert);
//  - copy or move one, so none outlives the body or reaches another thread: copying is a
//    static_assert, the address-of operator is one too, and operator new is deleted, so a witness
//    cannot be stored in global or shared memory, nor memcpy'd from its address (and it is not
//    trivially copyable);
//  - mix index spaces: every space is its own type, and each span accepts only its own (span.hpp).
//
// Each witness also states what its uniqueness rests on: the rank of the launch and, for some, the
// block shape. The host checks a launch against that before it starts (contract.hpp), and the
// entry checks the registers once more on the device (fits): under a shape that does not fit, the
// witness owns nothing and the kernel stops after the body, so even a launch through an unchecked
// path cannot hand two threads the same element.
#pragma once

#include "tessera/simt/config.hpp"

namespace tessera::simt {

// x, y, z extents or coordinates, in CUDA's order (x varies fastest).
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace detail {

// The registers a witness is minted from.
struct HardwareIds {
  Dim3 thread, block, block_dim, grid_dim;
#if defined(__CUDACC__)
  static __device__ TESSERA_SIMT_INLINE HardwareIds current() {
    return {{threadIdx.x, threadIdx.y, threadIdx.z},
            {blockIdx.x, blockIdx.y, blockIdx.z},
            {blockDim.x, blockDim.y, blockDim.z},
            {gridDim.x, gridDim.y, gridDim.z}};
  }
#endif
};

struct Mint;
struct MintTag {};

template <class W>
inline constexpr bool is_witness = false;

// The body of the public catch-all constructor of every witness: it only explains.
template <class Self, class... A>
TESSERA_SIMT_HD constexpr void reject_construction() {
  constexpr bool copy = sizeof...(A) == 1 && (is_same<remove_cvref<A>, Self> && ...);
  static_assert(!copy,
                "a thread-index witness (or the Slot of an element it owns) cannot be copied or "
                "moved: it must not outlive the kernel body or reach another thread. Pass it on "
                "by const reference.");
  static_assert(copy,
                "a thread-index witness cannot be made by kernel code: only the kernel entry "
                "mints one, from the hardware registers. Take it as the first parameter of the "
                "kernel body.");
}

}  // namespace detail

// What a witness (and the Slot of an element it owns, span.hpp) is: it cannot be copied, moved,
// addressed or heap-allocated, so it lives in the kernel body and in no other thread. These
// members belong to class templates, so their static_asserts fire only when code tries (and the
// compiler points at that line), while a user-provided copy constructor keeps the type from being
// trivially copyable. (That is why the witnesses are templates behind aliases: Index1D is
// BasicIndex1D<>.)
#define TESSERA_SIMT_PINNED(Self)                                                                \
  TESSERA_SIMT_HD Self(const Self&) {                                                            \
    static_assert(::tessera::simt::detail::always_false<Self>,                                   \
                  "a thread-index witness (or the Slot of an element it owns) cannot be copied " \
                  "or moved: it must not outlive the kernel body or reach another thread. "      \
                  "Pass it on by const reference.");                                             \
  }                                                                                              \
  TESSERA_SIMT_HD void operator&() const {                                                       \
    static_assert(::tessera::simt::detail::always_false<Self>,                                   \
                  "the address of a thread-index witness (or of the Slot of an element it "      \
                  "owns) cannot be taken: a pointer could carry it out of the kernel body or "   \
                  "to another thread. Pass it on by const reference.");                          \
  }                                                                                              \
  static void* operator new(decltype(sizeof 0)) = delete;                                        \
  static void* operator new[](decltype(sizeof 0)) = delete;

#define TESSERA_SIMT_WITNESS(Self)                                                      \
  TESSERA_SIMT_PINNED(Self)                                                             \
  TESSERA_SIMT_HD Self& operator=(const Self&) {                                        \
    static_assert(::tessera::simt::detail::always_false<Self>,                          \
                  "a thread-index witness cannot be assigned: each thread has exactly " \
                  "one, made by the kernel entry. Pass it on by const reference.");     \
    return *this;                                                                       \
  }                                                                                     \
  template <class... A>                                                                 \
  TESSERA_SIMT_HD explicit Self(A&&...) {                                               \
    ::tessera::simt::detail::reject_construction<Self, A...>();                         \
  }                                                                                     \
                                                                                        \
 private:                                                                               \
  friend struct ::tessera::simt::detail::Mint;

// One element per thread of a 1-D launch: element blockIdx.x * blockDim.x + threadIdx.x.
// Unique when the launch is 1-D (grid and block have y = z = 1).
template <class = void>
class BasicIndex1D {
 public:
  static constexpr int kRank = 1;
  static constexpr const char* kName = "Index1D";
  TESSERA_SIMT_HD index_t value() const { return value_; }
  TESSERA_SIMT_WITNESS(BasicIndex1D)
  TESSERA_SIMT_HD BasicIndex1D(detail::MintTag, index_t v) : value_(v) {}
  index_t value_;
};
using Index1D = BasicIndex1D<>;

// One element per thread of a 2-D launch: (row, col) = (y, x) coordinates of the thread in the
// whole grid. Unique when the launch is 2-D (grid and block have z = 1).
template <class = void>
class BasicIndex2D {
 public:
  static constexpr int kRank = 2;
  static constexpr const char* kName = "Index2D";
  TESSERA_SIMT_HD index_t row() const { return row_; }
  TESSERA_SIMT_HD index_t col() const { return col_; }
  TESSERA_SIMT_WITNESS(BasicIndex2D)
  TESSERA_SIMT_HD BasicIndex2D(detail::MintTag, index_t r, index_t c) : row_(r), col_(c) {}
  index_t row_, col_;
};
using Index2D = BasicIndex2D<>;

// One element per warp of a 1-D launch: warp w = (global thread index) / 32 owns element w, and
// its lane 0 is the one thread that may write it (after a shuffle reduction, lane 0 holds the
// result). Unique when the launch is 1-D; the contract also asks for blockDim.x to be a multiple
// of 32, so that these warps are the hardware's and shuffles see all 32 lanes.
template <class = void>
class BasicWarpIndex1D {
 public:
  static constexpr int kRank = 1;
  static constexpr const char* kName = "WarpIndex1D";
  static constexpr int kWarpSize = 32;
  TESSERA_SIMT_HD index_t warp() const { return warp_; }
  TESSERA_SIMT_HD int lane() const { return lane_; }
  TESSERA_SIMT_WITNESS(BasicWarpIndex1D)
  TESSERA_SIMT_HD BasicWarpIndex1D(detail::MintTag, index_t w, int l) : warp_(w), lane_(l) {}
  index_t warp_;
  int lane_;
};
using WarpIndex1D = BasicWarpIndex1D<>;

// Tiles of a row-major matrix: block (bx, by) owns the BM x BN tile whose first element is
// (by * BM, bx * BN), and thread (tx, ty) of it owns the TM x TN micro-tile starting TM * ty rows
// and TN * tx columns into it. Unique when the launch is 2-D with blocks of exactly
// (BN / TN, BM / TM) threads.
template <int BM, int BN, int TM, int TN>
class TileIndex2D {
  static_assert(BM > 0 && BN > 0 && TM > 0 && TN > 0 && BM % TM == 0 && BN % TN == 0,
                "TileIndex2D<BM, BN, TM, TN>: the micro-tile TM x TN must divide the block tile "
                "BM x BN");

 public:
  static constexpr int kRank = 2;
  static constexpr const char* kName = "TileIndex2D";
  static constexpr int kBlockRows = BM, kBlockCols = BN, kRows = TM, kCols = TN;
  static constexpr unsigned kBlockX = BN / TN, kBlockY = BM / TM;
  static constexpr int kThreads = static_cast<int>(kBlockX * kBlockY);
  // The block's tile and this thread's micro-tile, as the first row and column of each.
  TESSERA_SIMT_HD index_t block_row0() const { return block_row0_; }
  TESSERA_SIMT_HD index_t block_col0() const { return block_col0_; }
  TESSERA_SIMT_HD index_t row0() const { return block_row0_ + ty_ * TM; }
  TESSERA_SIMT_HD index_t col0() const { return block_col0_ + tx_ * TN; }
  // This thread's rank in its block, 0 .. kThreads - 1 (for cooperative loads).
  TESSERA_SIMT_HD int thread_rank() const { return static_cast<int>(ty_ * kBlockX + tx_); }
  TESSERA_SIMT_WITNESS(TileIndex2D)
  TESSERA_SIMT_HD TileIndex2D(detail::MintTag, index_t br, index_t bc, unsigned ty, unsigned tx)
      : block_row0_(br), block_col0_(bc), ty_(ty), tx_(tx) {}
  index_t block_row0_, block_col0_;
  unsigned ty_, tx_;
};

#undef TESSERA_SIMT_WITNESS

namespace detail {

template <class T>
inline constexpr bool is_witness<BasicIndex1D<T>> = true;
template <class T>
inline constexpr bool is_witness<BasicIndex2D<T>> = true;
template <class T>
inline constexpr bool is_witness<BasicWarpIndex1D<T>> = true;
template <int BM, int BN, int TM, int TN>
inline constexpr bool is_witness<TileIndex2D<BM, BN, TM, TN>> = true;

// The launch shape each witness's uniqueness rests on: the launch's rank, and the block shape
// where the witness fixes it (0: any extent). Read by the host checks and by fits().
template <class W>
struct WitnessShape {
  static constexpr unsigned block_x = 0, block_y = 0;
  static constexpr unsigned block_x_multiple = 1;
};
template <>
struct WitnessShape<WarpIndex1D> {
  static constexpr unsigned block_x = 0, block_y = 0;
  static constexpr unsigned block_x_multiple = WarpIndex1D::kWarpSize;
};
template <int BM, int BN, int TM, int TN>
struct WitnessShape<TileIndex2D<BM, BN, TM, TN>> {
  static constexpr unsigned block_x = TileIndex2D<BM, BN, TM, TN>::kBlockX;
  static constexpr unsigned block_y = TileIndex2D<BM, BN, TM, TN>::kBlockY;
  static constexpr unsigned block_x_multiple = 1;
};

// True when no two threads of a launch with these registers' extents get the same witness: the
// unused axes of grid and block are 1, and a witness that fixes the block shape gets it. (The
// multiple-of-32 rule of WarpIndex1D is about shuffles, not uniqueness: it is checked on the host.)
template <class W>
TESSERA_SIMT_HD constexpr bool fits(const Dim3& grid_dim, const Dim3& block_dim) {
  if (grid_dim.z != 1 || block_dim.z != 1) return false;
  if (W::kRank == 1 && (grid_dim.y != 1 || block_dim.y != 1)) return false;
  using S = WitnessShape<W>;
  if (S::block_x != 0 && block_dim.x != S::block_x) return false;
  if (S::block_y != 0 && block_dim.y != S::block_y) return false;
  return true;
}

// The index a witness gets when the launch shape does not fit it (fits() is false): far below 0,
// so every span's unsigned bounds test fails, for every offset a witness adds to it. Such a
// witness owns nothing; the entry then stops the kernel after the body.
inline constexpr index_t kUnownedIndex = -(index_t{1} << 62);

// The only maker of witnesses. The kernel entry calls it with HardwareIds::current() and whether
// the launch shape fits the witness; the host unit tests call mint_unchecked to check the index
// arithmetic on simulated registers. A select, not a branch: the loads of the body need not wait
// for the shape check (which costs a few percent of a memory-bound kernel when it is a branch).
struct Mint {
  template <class W>
  struct Tag {};

  template <class W>
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE W make(const HardwareIds& h, bool fit) {
    return make(h, fit, Tag<W>{});
  }

 private:
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t own(bool fit, index_t v) {
    return fit ? v : kUnownedIndex;
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE Index1D make(const HardwareIds& h, bool fit,
                                                          Tag<Index1D>) {
    return Index1D(MintTag{},
                   own(fit, static_cast<index_t>(h.block.x) * h.block_dim.x + h.thread.x));
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE Index2D make(const HardwareIds& h, bool fit,
                                                          Tag<Index2D>) {
    return Index2D(MintTag{},
                   own(fit, static_cast<index_t>(h.block.y) * h.block_dim.y + h.thread.y),
                   own(fit, static_cast<index_t>(h.block.x) * h.block_dim.x + h.thread.x));
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE WarpIndex1D make(const HardwareIds& h, bool fit,
                                                              Tag<WarpIndex1D>) {
    const index_t linear = static_cast<index_t>(h.block.x) * h.block_dim.x + h.thread.x;
    return WarpIndex1D(MintTag{}, own(fit, linear / WarpIndex1D::kWarpSize),
                       static_cast<int>(linear % WarpIndex1D::kWarpSize));
  }
  template <int BM, int BN, int TM, int TN>
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE TileIndex2D<BM, BN, TM, TN> make(
      const HardwareIds& h, bool fit, Tag<TileIndex2D<BM, BN, TM, TN>>) {
    return TileIndex2D<BM, BN, TM, TN>(MintTag{}, own(fit, static_cast<index_t>(h.block.y) * BM),
                                       own(fit, static_cast<index_t>(h.block.x) * BN), h.thread.y,
                                       h.thread.x);
  }
};

// Forges a witness from simulated registers. For the host unit tests of the index arithmetic and
// of span ownership; a kernel that calls it gives up the guarantee, as the name says.
template <class W>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE W mint_unchecked(const HardwareIds& h) {
  return Mint::make<W>(h, fits<W>(h.grid_dim, h.block_dim));
}

}  // namespace detail
}  // namespace tessera::simt

// Thread-index witnesses. A witness is the proof a thread carries that it runs the kernel body of
// a launch whose index space is the witness's; it is a token with no data. The element (or group
// of elements) a thread owns is derived from the hardware registers (threadIdx, blockIdx,
// blockDim, gridDim) at the point of use: by the witness's accessors (value(), row0(), ...), by
// DisjointSpan::at(), and again by every write through a Slot (span.hpp). So a witness (or a Slot)
// forged from bytes, memcpy'd, punned through a union or passed through shared memory from
// another thread names only the calling thread's own element: there is nothing in its bytes to
// forge. (DESIGN §6, "SIMT witnesses that do not trust bytes".)
//
// What a witness's type still says is the launch's declared mapping from threads to elements:
// Index1D and WarpIndex1D, say, give element 5 to different threads. A token of another type than
// the kernel's (which only byte-level tricks can make: its constructors are private) could mix
// two mappings in one launch, so every output span carries the kind of the kernel's witness,
// written by the host launcher, and at() stops the kernel when the token's kind is not it.
//
// Kernel code cannot make one (the constructors are private; the kernel entry mints the one the
// body takes), copy, move or address one (static_asserts, written for the user's benefit: copying
// is harmless now that a witness holds nothing), nor mix index spaces at compile time (each span
// accepts only its own, span.hpp).
//
// Each witness also states what its uniqueness rests on: the rank of the launch and, for some, the
// block shape. The host checks a launch against that before it starts (contract.hpp), and the
// device checks the registers again wherever an element is derived (fits): under a shape that does
// not fit, a thread owns nothing, and the entry stops the kernel after the body, so even a launch
// through an unchecked path cannot hand two threads the same element.
#pragma once

#include "tessera/simt/config.hpp"

namespace tessera::simt {

// x, y, z extents or coordinates, in CUDA's order (x varies fastest).
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};

namespace detail {

// The registers elements are derived from.
struct HardwareIds {
  Dim3 thread, block, block_dim, grid_dim;
  // The calling thread's registers. On the device, the hardware's; in host code (the unit tests,
  // which run kernel code on simulated registers), what the innermost SimulatedThread set.
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE HardwareIds current();
};

#if !defined(__CUDA_ARCH__)
// Host only (kernel code on the device cannot reach it): the registers of the thread that host
// code simulates; by default thread 0 of a one-thread launch.
inline HardwareIds& simulated_ids() {
  static thread_local HardwareIds ids{{0, 0, 0}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}};
  return ids;
}
#endif

TESSERA_SIMT_HD TESSERA_SIMT_INLINE HardwareIds HardwareIds::current() {
#if defined(__CUDA_ARCH__)
  return {{threadIdx.x, threadIdx.y, threadIdx.z},
          {blockIdx.x, blockIdx.y, blockIdx.z},
          {blockDim.x, blockDim.y, blockDim.z},
          {gridDim.x, gridDim.y, gridDim.z}};
#else
  return simulated_ids();
#endif
}

struct MintTag {};
struct Entry;
class SimulatedThread;

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
                "mints one. Take it as the first parameter of the kernel body.");
}

// The index a thread gets when the launch shape does not fit its witness (fits() is false): far
// below 0, so every span's unsigned bounds test fails, for every offset a witness adds to it. Such
// a thread owns nothing; the entry then stops the kernel after the body.
inline constexpr index_t kUnownedIndex = -(index_t{1} << 62);

// A select, not a branch: the loads of the body need not wait for the shape check (which costs a
// few percent of a memory-bound kernel when it is a branch).
TESSERA_SIMT_HD TESSERA_SIMT_INLINE constexpr index_t own(bool fit, index_t v) {
  return fit ? v : kUnownedIndex;
}

}  // namespace detail

// What a witness (and the Slot of an element it owns, span.hpp) is: it cannot be copied, moved,
// addressed or heap-allocated, so it lives in the kernel body. These members belong to class
// templates, so their static_asserts fire only when code tries (and the compiler points at that
// line), while a user-provided copy constructor keeps the type from being trivially copyable (so
// std::bit_cast refuses it). That is why the witnesses are templates behind aliases: Index1D is
// BasicIndex1D<>. None of this is what makes a copied witness harmless (deriving its element
// from the registers does); it keeps honest code honest, with messages that say what to write.
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
  friend struct ::tessera::simt::detail::Entry;                                         \
  friend class ::tessera::simt::detail::SimulatedThread;                                \
  TESSERA_SIMT_HD explicit Self(::tessera::simt::detail::MintTag) {}

// Each witness's mapping is a set of static functions of the registers (`h`), used by its
// accessors, by the spans and by the host tests; `fits` says whether the launch shape keeps it
// one-to-one (see detail::fits below).

// One element per thread of a 1-D launch: element blockIdx.x * blockDim.x + threadIdx.x.
// Unique when the launch is 1-D (grid and block have y = z = 1).
template <class = void>
class BasicIndex1D {
 public:
  static constexpr int kRank = 1;
  static constexpr const char* kName = "Index1D";
  // This thread's element (kUnownedIndex, far below 0, under a launch shape that does not fit).
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t value() const {
    return element(detail::HardwareIds::current());
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t element(const detail::HardwareIds& h);
  TESSERA_SIMT_WITNESS(BasicIndex1D)
};
using Index1D = BasicIndex1D<>;

// One element per thread of a 2-D launch: (row, col) = (y, x) coordinates of the thread in the
// whole grid. Unique when the launch is 2-D (grid and block have z = 1).
template <class = void>
class BasicIndex2D {
 public:
  static constexpr int kRank = 2;
  static constexpr const char* kName = "Index2D";
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t row() const {
    return row_of(detail::HardwareIds::current());
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t col() const {
    return col_of(detail::HardwareIds::current());
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t row_of(const detail::HardwareIds& h);
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t col_of(const detail::HardwareIds& h);
  TESSERA_SIMT_WITNESS(BasicIndex2D)
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
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t warp() const {
    return warp_of(detail::HardwareIds::current());
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE int lane() const {
    return lane_of(detail::HardwareIds::current());
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t warp_of(const detail::HardwareIds& h);
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE int lane_of(const detail::HardwareIds& h) {
    return static_cast<int>(linear(h) % kWarpSize);
  }
  TESSERA_SIMT_WITNESS(BasicWarpIndex1D)
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t linear(const detail::HardwareIds& h) {
    return static_cast<index_t>(h.block.x) * h.block_dim.x + h.thread.x;
  }
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
  // (So that the witness's kind, detail::witness_kind, names the four numbers exactly.)
  static_assert(BM < (1 << 16) && BN < (1 << 16),
                "TileIndex2D<BM, BN, TM, TN>: a block tile is at most 65535 x 65535 elements");

 public:
  static constexpr int kRank = 2;
  static constexpr const char* kName = "TileIndex2D";
  static constexpr int kBlockRows = BM, kBlockCols = BN, kRows = TM, kCols = TN;
  static constexpr unsigned kBlockX = BN / TN, kBlockY = BM / TM;
  static constexpr int kThreads = static_cast<int>(kBlockX * kBlockY);
  // The block's tile and this thread's micro-tile, as the first row and column of each.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t block_row0() const {
    return block_row0_of(detail::HardwareIds::current());
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t block_col0() const {
    return block_col0_of(detail::HardwareIds::current());
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t row0() const {
    return row0_of(detail::HardwareIds::current());
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t col0() const {
    return col0_of(detail::HardwareIds::current());
  }
  // This thread's rank in its block, 0 .. kThreads - 1 (for cooperative loads).
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE int thread_rank() const {
    const detail::HardwareIds h = detail::HardwareIds::current();
    return static_cast<int>(h.thread.y * kBlockX + h.thread.x);
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t block_row0_of(const detail::HardwareIds& h);
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t block_col0_of(const detail::HardwareIds& h);
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t row0_of(const detail::HardwareIds& h) {
    return block_row0_of(h) + static_cast<index_t>(h.thread.y) * TM;
  }
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t col0_of(const detail::HardwareIds& h) {
    return block_col0_of(h) + static_cast<index_t>(h.thread.x) * TN;
  }
  TESSERA_SIMT_WITNESS(TileIndex2D)
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

// The kind of a kernel's witness, written into its output spans by the host launcher and compared
// with the token's type by at(): one number per mapping (0: the kernel takes no witness, so no
// token owns anything). A TileIndex2D's kind holds its four numbers (BM, BN < 2^16 and TM, TN,
// which divide them, as well), so no two mappings share one.
template <class W>
inline constexpr unsigned long long witness_kind = 0;
template <>
inline constexpr unsigned long long witness_kind<Index1D> = 1;
template <>
inline constexpr unsigned long long witness_kind<Index2D> = 2;
template <>
inline constexpr unsigned long long witness_kind<WarpIndex1D> = 3;
template <int BM, int BN, int TM, int TN>
inline constexpr unsigned long long witness_kind<TileIndex2D<BM, BN, TM, TN>> =
    4ull | static_cast<unsigned long long>(BM) << 4 | static_cast<unsigned long long>(BN) << 20 |
    static_cast<unsigned long long>(TM) << 36 | static_cast<unsigned long long>(TN) << 52;

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

// True when no two threads of a launch with these registers' extents get the same element: the
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
template <class W>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE constexpr bool fits(const HardwareIds& h) {
  return fits<W>(h.grid_dim, h.block_dim);
}

// Mints the tokens: the kernel entry (kernel.hpp) makes the one its body takes.
struct Entry {
#if defined(__CUDACC__)
  // Mints K's witness and calls K's body with the arguments in `pack` (defined in kernel.hpp).
  template <class K, class Pack>
  static __device__ TESSERA_SIMT_INLINE void run(const Pack& pack);
#endif

 private:
#if defined(__CUDACC__)
  template <class K, class Pack, unsigned... I>
  static __device__ TESSERA_SIMT_INLINE void call(const Pack& pack, IndexSeq<I...>);
#endif
  template <class W>
  static TESSERA_SIMT_HD TESSERA_SIMT_INLINE W mint() {
    return W(MintTag{});
  }
};

#if !defined(__CUDA_ARCH__)
// Host only: runs host code (unit tests) as one thread of a simulated launch, with its witness.
// Nothing on the device can reach it: device code reads the hardware's registers.
class SimulatedThread {
 public:
  explicit SimulatedThread(const HardwareIds& h) : saved_(simulated_ids()) { simulated_ids() = h; }
  ~SimulatedThread() { simulated_ids() = saved_; }
  SimulatedThread(const SimulatedThread&) = delete;
  SimulatedThread& operator=(const SimulatedThread&) = delete;
  // The token the entry would hand this thread's body.
  template <class W>
  static W witness() {
    return W(MintTag{});
  }

 private:
  HardwareIds saved_;
};
#endif

}  // namespace detail

template <class X>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t BasicIndex1D<X>::element(const detail::HardwareIds& h) {
  return detail::own(detail::fits<BasicIndex1D>(h),
                     static_cast<index_t>(h.block.x) * h.block_dim.x + h.thread.x);
}
template <class X>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t BasicIndex2D<X>::row_of(const detail::HardwareIds& h) {
  return detail::own(detail::fits<BasicIndex2D>(h),
                     static_cast<index_t>(h.block.y) * h.block_dim.y + h.thread.y);
}
template <class X>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t BasicIndex2D<X>::col_of(const detail::HardwareIds& h) {
  return detail::own(detail::fits<BasicIndex2D>(h),
                     static_cast<index_t>(h.block.x) * h.block_dim.x + h.thread.x);
}
template <class X>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t
BasicWarpIndex1D<X>::warp_of(const detail::HardwareIds& h) {
  return detail::own(detail::fits<BasicWarpIndex1D>(h), linear(h) / kWarpSize);
}
template <int BM, int BN, int TM, int TN>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t
TileIndex2D<BM, BN, TM, TN>::block_row0_of(const detail::HardwareIds& h) {
  return detail::own(detail::fits<TileIndex2D>(h), static_cast<index_t>(h.block.y) * BM);
}
template <int BM, int BN, int TM, int TN>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE index_t
TileIndex2D<BM, BN, TM, TN>::block_col0_of(const detail::HardwareIds& h) {
  return detail::own(detail::fits<TileIndex2D>(h), static_cast<index_t>(h.block.x) * BN);
}

}  // namespace tessera::simt

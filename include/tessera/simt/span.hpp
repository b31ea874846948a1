// The parameter types of a checked kernel.
//
// Outputs are DisjointSpan<T> (1-D) and DisjointSpan2D<T> (a row-major matrix with a row pitch).
// Neither has an operator that hands out an arbitrary element: a thread asks with its witness,
// `out.at(w)`, and gets a Slot that holds its own element, or nothing when that element is past
// the end. Which element is the thread's is derived from the hardware registers when at() is
// called and again at every write through the Slot; the Slot's bytes hold only the span and, for a
// micro-tile, the (row, col) inside it, both checked again at the write. So a Slot copied from
// another thread (through shared memory, memcpy, a union) writes the copier's own element, and one
// whose (row, col) was overwritten writes nothing and stops the kernel. A Slot gives out no
// pointer.
//
// Inputs are Span<const T> and Span2D<const T>: read-only, readable anywhere, bounds-checked (an
// out-of-bounds read stops the kernel); `get_or` reads with a fallback past the edge, and
// `load_unchecked` skips the check where the caller has proved the index in bounds. Reads return
// values, never references, so nothing a read returns can be written through.
//
// Spans are made only by the host launcher (from tensors whose address ranges it has checked not
// to overlap), never by kernel code: their constructors are private, and the maker
// (detail::SpanAccess) is host code, which device code cannot call. A span is not trivially
// copyable, so std::bit_cast refuses to turn it into (or out of) a struct with a pointer. What C++
// cannot forbid is reading or writing a span's bytes (memcpy, reinterpret_cast, a union): those
// are the byte-level routes docs/safety_simt.md lists, outside the guarantee.
#pragma once

#include "tessera/simt/config.hpp"
#include "tessera/simt/index.hpp"

namespace tessera::simt {

namespace detail {
struct SpanAccess;

// Where a thread's element is, and whether it owns it.
template <class T>
struct Located {
  bool owned;
  T* p;
};

template <class W>
inline constexpr bool is_tile_index = false;
template <int BM, int BN, int TM, int TN>
inline constexpr bool is_tile_index<TileIndex2D<BM, BN, TM, TN>> = true;

// A token of another kind than the kernel's witness can only come from byte-level tricks; it
// would mix two thread-to-element mappings in one launch, so the kernel stops. (A uniform branch
// on a kernel parameter: it costs an instruction, not a stall.)
template <class W>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE void check_kind(unsigned long long kind) {
  if (__builtin_expect(kind != witness_kind<W>, 0)) trap();
}
}  // namespace detail

// ---- Slot: the one element a thread owns ---------------------------------------------------

template <class T, class S, class W>
class ElementRef;

// An optional element: `if (auto o = out.at(w)) *o = v;`.
template <class T, class S, class W>
class Slot {
 public:
  TESSERA_SIMT_PINNED(Slot)
  TESSERA_SIMT_HD Slot& operator=(const Slot&) = delete;
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE explicit operator bool() const { return locate().owned; }
  // The element; a write or read through it stops the kernel when the slot is empty.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE ElementRef<T, S, W> operator*() const {
    return ElementRef<T, S, W>(span_, r_, c_);
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE void store(T v) const { *(*this) = v; }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T load() const { return *(*this); }

 private:
  friend S;
  TESSERA_SIMT_HD Slot(const S& s, int r, int c) : span_(s), r_(r), c_(c) {}
  // (Recomputed from the registers each time; inlined, the compiler merges the recomputations of
  // one thread, so `if (auto o = ...) *o = v` tests once.)
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE detail::Located<T> locate() const {
    return span_.template locate<W>(r_, c_);
  }
  S span_;
  int r_, c_;  // the element inside a TileIndex2D's micro-tile; 0 for the other witnesses
};

// Assigning through *slot writes the element; reading it reads the element. Non-copyable, like
// the Slot it comes from; each access finds the element from the registers again.
template <class T, class S, class W>
class ElementRef {
 public:
  TESSERA_SIMT_PINNED(ElementRef)
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator=(T v) const {
    *element() = v;
    return *this;
  }
  // Copies the value of another of this thread's elements (not the reference).
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator=(const ElementRef& o) const {
    *element() = static_cast<T>(o);
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator+=(T v) const {
    *element() += v;
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator-=(T v) const {
    *element() -= v;
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator*=(T v) const {
    *element() *= v;
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE operator T() const { return *element(); }  // NOLINT

 private:
  template <class, class, class>
  friend class Slot;
  TESSERA_SIMT_HD ElementRef(const S& s, int r, int c) : span_(s), r_(r), c_(c) {}
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T* element() const {
    const detail::Located<T> l = span_.template locate<W>(r_, c_);
    if (!l.owned) detail::trap();
    return l.p;
  }
  S span_;
  int r_, c_;
};

// ---- read-only inputs ------------------------------------------------------------------------

template <class T>
class Span {
  static_assert(detail::always_false<T>,
                "Span<T> is a read-only input and is written Span<const T>; a kernel output is a "
                "DisjointSpan<T>, written element by element through the thread's witness.");
};

template <class T>
class Span<const T> {
  static_assert(detail::is_element<T>,
                "Span<const T>: T must be an arithmetic type (bool, an integer type, float or "
                "double), which has the same layout on the host and the device.");

 public:
  using element_type = T;
  TESSERA_SIMT_HD Span() {}  // empty
  // (User-provided, so that a span is not trivially copyable: std::bit_cast refuses it.)
  TESSERA_SIMT_HD Span(const Span& o) : data_(o.data_), size_(o.size_) {}
  TESSERA_SIMT_HD Span& operator=(const Span& o) {
    data_ = o.data_;
    size_ = o.size_;
    return *this;
  }
  TESSERA_SIMT_HD index_t size() const { return size_; }
  // Element j; stops the kernel when j is out of bounds. (The load is predicated on the bounds
  // test rather than placed after a branch to the stop, so it need not wait for the branch.)
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T operator[](index_t j) const {
    const bool ok = detail::below(j, size_);
    const T v = ok ? data_[j] : T();
    if (__builtin_expect(!ok, 0)) detail::trap();
    return v;
  }
  // The element with the witness's index (the element a DisjointSpan of the same size would give
  // this thread).
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T operator[](const Index1D& i) const {
    return (*this)[i.value()];
  }
  // Element j, or `fallback` when j is out of bounds.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T get_or(index_t j, T fallback) const {
    return detail::below(j, size_) ? data_[j] : fallback;
  }
  // Element j without the bounds check: for loops whose bounds the caller has checked. A value,
  // not a reference: nothing can be written through it.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T load_unchecked(index_t j) const { return data_[j]; }
  // The first element's address, for reads that the span's own cannot express (inline PTX). An
  // opt-out, named so: a write through it (after a const_cast) is outside every guarantee.
  TESSERA_SIMT_HD const T* unsafe_data() const { return data_; }

 private:
  friend struct detail::SpanAccess;
  template <class>
  friend class Span2D;
  TESSERA_SIMT_HD Span(const T* d, index_t n) : data_(d), size_(n) {}
  const T* data_ = nullptr;
  index_t size_ = 0;
};

// A read-only row-major matrix: element (r, c) is at data[r * pitch + c].
template <class T>
class Span2D {
  static_assert(detail::always_false<T>,
                "Span2D<T> is a read-only input and is written Span2D<const T>; a kernel output "
                "is a DisjointSpan2D<T>, written through the thread's witness.");
};

template <class T>
class Span2D<const T> {
  static_assert(detail::is_element<T>,
                "Span2D<const T>: T must be an arithmetic type (bool, an integer type, float or "
                "double), which has the same layout on the host and the device.");

 public:
  using element_type = T;
  TESSERA_SIMT_HD Span2D() {}  // empty
  TESSERA_SIMT_HD Span2D(const Span2D& o)
      : data_(o.data_), rows_(o.rows_), cols_(o.cols_), pitch_(o.pitch_) {}
  TESSERA_SIMT_HD Span2D& operator=(const Span2D& o) {
    data_ = o.data_;
    rows_ = o.rows_;
    cols_ = o.cols_;
    pitch_ = o.pitch_;
    return *this;
  }
  TESSERA_SIMT_HD index_t rows() const { return rows_; }
  TESSERA_SIMT_HD index_t cols() const { return cols_; }
  TESSERA_SIMT_HD index_t pitch() const { return pitch_; }
  TESSERA_SIMT_HD bool contains(index_t r, index_t c) const {
    return detail::below(r, rows_) && detail::below(c, cols_);
  }
  // Element (r, c); stops the kernel when it is out of bounds.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T operator()(index_t r, index_t c) const {
    const bool ok = contains(r, c);
    const T v = ok ? data_[r * pitch_ + c] : T();
    if (__builtin_expect(!ok, 0)) detail::trap();
    return v;
  }
  // Element (r, c), or `fallback` outside the matrix (the padding of an edge tile).
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T get_or(index_t r, index_t c, T fallback) const {
    return contains(r, c) ? data_[r * pitch_ + c] : fallback;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T load_unchecked(index_t r, index_t c) const {
    return data_[r * pitch_ + c];
  }
  // Row r as a span; stops the kernel when r is out of bounds.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Span<const T> row(index_t r) const {
    if (!detail::below(r, rows_)) detail::trap();
    return Span<const T>(data_ + r * pitch_, cols_);
  }
  // The address of element (0, 0): an opt-out, as Span<const T>::unsafe_data().
  TESSERA_SIMT_HD const T* unsafe_data() const { return data_; }

 private:
  friend struct detail::SpanAccess;
  const T* data_ = nullptr;
  index_t rows_ = 0, cols_ = 0, pitch_ = 0;
};

// ---- outputs -------------------------------------------------------------------------------

template <class T>
class DisjointSpan {
  static_assert(detail::is_element<T>,
                "DisjointSpan<T>: T must be a mutable arithmetic type (bool, an integer type, "
                "float or double); an input is Span<const T>.");

 public:
  using element_type = T;
  TESSERA_SIMT_HD DisjointSpan() {}  // empty: owns nothing
  TESSERA_SIMT_HD DisjointSpan(const DisjointSpan& o)
      : data_(o.data_), size_(o.size_), kind_(o.kind_) {}
  TESSERA_SIMT_HD DisjointSpan& operator=(const DisjointSpan& o) {
    data_ = o.data_;
    size_ = o.size_;
    kind_ = o.kind_;
    return *this;
  }
  TESSERA_SIMT_HD index_t size() const { return size_; }

  // This thread's element, or an empty slot past the end.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T, DisjointSpan, Index1D> at(const Index1D&) const {
    return Slot<T, DisjointSpan, Index1D>(*this, 0, 0);
  }
  // This warp's element, held by lane 0 only; the other lanes get an empty slot.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T, DisjointSpan, WarpIndex1D> at(
      const WarpIndex1D&) const {
    return Slot<T, DisjointSpan, WarpIndex1D>(*this, 0, 0);
  }
  template <class W, class... Rest>
  TESSERA_SIMT_HD void at(const W&, const Rest&...) const {
    static_assert(detail::always_false<W>,
                  "DisjointSpan<T>::at() takes the thread's Index1D or WarpIndex1D: a 1-D output "
                  "is indexed by a 1-D witness only, so two index spaces cannot hand the same "
                  "element to two threads. Use a DisjointSpan2D for 2-D witnesses.");
  }
  template <class I>
  TESSERA_SIMT_HD void operator[](const I&) const {
    static_assert(detail::always_false<I>,
                  "DisjointSpan has no operator[]: a thread writes only its own element, "
                  "`if (auto o = out.at(witness)) *o = value;`.");
  }

 private:
  friend struct detail::SpanAccess;
  template <class, class, class>
  friend class Slot;
  template <class, class, class>
  friend class ElementRef;
  // The calling thread's element under witness W, from the registers.
  template <class W>
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE detail::Located<T> locate(int, int) const {
    detail::check_kind<W>(kind_);
    const detail::HardwareIds h = detail::HardwareIds::current();
    if constexpr (detail::is_same<W, WarpIndex1D>) {
      const index_t j = WarpIndex1D::warp_of(h);
      const bool owned = WarpIndex1D::lane_of(h) == 0 && detail::below(j, size_);
      return {owned, owned ? data_ + j : data_};
    } else {
      const index_t j = Index1D::element(h);
      const bool owned = detail::below(j, size_);
      return {owned, owned ? data_ + j : data_};
    }
  }
  T* data_ = nullptr;
  index_t size_ = 0;
  unsigned long long kind_ = 0;  // detail::witness_kind of the kernel's witness
};

// A row-major matrix output: element (r, c) is at data[r * pitch + c].
template <class T>
class DisjointSpan2D {
  static_assert(detail::is_element<T>,
                "DisjointSpan2D<T>: T must be a mutable arithmetic type (bool, an integer type, "
                "float or double); an input is Span2D<const T>.");

 public:
  using element_type = T;
  TESSERA_SIMT_HD DisjointSpan2D() {}  // empty: owns nothing
  TESSERA_SIMT_HD DisjointSpan2D(const DisjointSpan2D& o)
      : data_(o.data_), rows_(o.rows_), cols_(o.cols_), pitch_(o.pitch_), kind_(o.kind_) {}
  TESSERA_SIMT_HD DisjointSpan2D& operator=(const DisjointSpan2D& o) {
    data_ = o.data_;
    rows_ = o.rows_;
    cols_ = o.cols_;
    pitch_ = o.pitch_;
    kind_ = o.kind_;
    return *this;
  }
  TESSERA_SIMT_HD index_t rows() const { return rows_; }
  TESSERA_SIMT_HD index_t cols() const { return cols_; }
  TESSERA_SIMT_HD index_t pitch() const { return pitch_; }

  // This thread's element (w.row(), w.col()), or an empty slot outside the matrix.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T, DisjointSpan2D, Index2D> at(const Index2D&) const {
    return Slot<T, DisjointSpan2D, Index2D>(*this, 0, 0);
  }
  // Element (r, c) of this thread's TM x TN micro-tile (0 <= r < TM, 0 <= c < TN), or an empty
  // slot when (r, c) is outside the micro-tile or the micro-tile's element is outside the matrix.
  template <int BM, int BN, int TM, int TN>
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T, DisjointSpan2D, TileIndex2D<BM, BN, TM, TN>> at(
      const TileIndex2D<BM, BN, TM, TN>&, int r, int c) const {
    return Slot<T, DisjointSpan2D, TileIndex2D<BM, BN, TM, TN>>(*this, r, c);
  }
  template <class W, class... Rest>
  TESSERA_SIMT_HD void at(const W&, const Rest&...) const {
    static_assert(detail::always_false<W>,
                  "DisjointSpan2D<T>::at() takes the thread's Index2D, or its TileIndex2D and a "
                  "(row, col) in its micro-tile: a 2-D output is indexed by a 2-D witness only, "
                  "so two index spaces cannot hand the same element to two threads.");
  }
  template <class I>
  TESSERA_SIMT_HD void operator[](const I&) const {
    static_assert(detail::always_false<I>,
                  "DisjointSpan2D has no operator[]: a thread writes only its own elements, "
                  "`if (auto o = out.at(witness)) *o = value;`.");
  }
  template <class... I>
  TESSERA_SIMT_HD void operator()(const I&...) const {
    static_assert(detail::always_false<I...>,
                  "DisjointSpan2D has no operator(): a thread writes only its own elements, "
                  "`if (auto o = out.at(witness)) *o = value;`.");
  }

 private:
  friend struct detail::SpanAccess;
  template <class, class, class>
  friend class Slot;
  template <class, class, class>
  friend class ElementRef;
  TESSERA_SIMT_HD bool inside(index_t r, index_t c) const {
    return detail::below(r, rows_) && detail::below(c, cols_);
  }
  template <class W>
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE detail::Located<T> locate(int r, int c) const {
    detail::check_kind<W>(kind_);
    const detail::HardwareIds h = detail::HardwareIds::current();
    if constexpr (detail::is_tile_index<W>) {
      // (r, c) come from the Slot's bytes: checked against the micro-tile here, at the write.
      const bool mine = static_cast<unsigned>(r) < static_cast<unsigned>(W::kRows) &&
                        static_cast<unsigned>(c) < static_cast<unsigned>(W::kCols);
      const index_t gr = W::row0_of(h) + r, gc = W::col0_of(h) + c;
      const bool owned = mine && inside(gr, gc);
      return {owned, owned ? data_ + gr * pitch_ + gc : data_};
    } else {
      const index_t gr = Index2D::row_of(h), gc = Index2D::col_of(h);
      const bool owned = inside(gr, gc);
      return {owned, owned ? data_ + gr * pitch_ + gc : data_};
    }
  }
  T* data_ = nullptr;
  index_t rows_ = 0, cols_ = 0, pitch_ = 0;
  unsigned long long kind_ = 0;  // detail::witness_kind of the kernel's witness
};

// The block's dynamic shared memory (the contract's dynamic_shared bytes) as elements of T:
// scratch shared by the threads of one block, indexed freely and bounds-checked. Its use between
// threads is the kernel's to order with __syncthreads(), as for __shared__ arrays: the
// one-writer guarantee of DisjointSpan is about the kernel's outputs in global memory.
template <class T>
class SharedSpan {
 public:
  TESSERA_SIMT_HD index_t size() const { return size_; }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T& operator[](index_t j) const {
    if (!detail::below(j, size_)) detail::trap();
    return data_[j];
  }

 private:
  template <class U>
  friend TESSERA_SIMT_DEVICE SharedSpan<U> dynamic_shared();
  TESSERA_SIMT_HD SharedSpan(T* d, index_t n) : data_(d), size_(n) {}
  T* data_;
  index_t size_;
};

#if defined(__CUDACC__)
template <class T>
__device__ TESSERA_SIMT_INLINE SharedSpan<T> dynamic_shared() {
  extern __shared__ __align__(16) unsigned char tessera_simt_dynamic_smem[];
  unsigned bytes;
  asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
  return SharedSpan<T>(reinterpret_cast<T*>(tessera_simt_dynamic_smem), bytes / sizeof(T));
}
#endif

#if !defined(__CUDACC_RTC__)
namespace detail {

// How the host launcher (and the host unit tests) make spans: host code, which device code cannot
// call (nvcc refuses a call from a __device__ function; NVRTC never sees this). An output span
// carries the kind of the kernel's witness W (witness_kind<void> = 0: no token owns anything).
struct SpanAccess {
  template <class T>
  static Span<const T> input(const T* data, index_t size) {
    return Span<const T>(data, size);
  }
  template <class T>
  static Span2D<const T> input2d(const T* data, index_t rows, index_t cols, index_t pitch) {
    Span2D<const T> s;
    s.data_ = data;
    s.rows_ = rows;
    s.cols_ = cols;
    s.pitch_ = pitch;
    return s;
  }
  template <class W, class T>
  static DisjointSpan<T> output(T* data, index_t size) {
    DisjointSpan<T> s;
    s.data_ = data;
    s.size_ = size;
    s.kind_ = witness_kind<W>;
    return s;
  }
  template <class W, class T>
  static DisjointSpan2D<T> output2d(T* data, index_t rows, index_t cols, index_t pitch) {
    DisjointSpan2D<T> s;
    s.data_ = data;
    s.rows_ = rows;
    s.cols_ = cols;
    s.pitch_ = pitch;
    s.kind_ = witness_kind<W>;
    return s;
  }
};

}  // namespace detail
#endif

}  // namespace tessera::simt

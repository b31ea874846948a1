// The parameter types of a checked kernel.
//
// Outputs are DisjointSpan<T> (1-D) and DisjointSpan2D<T> (a row-major matrix with a row pitch).
// Neither has an operator that hands out an arbitrary element: a thread asks with its witness,
// `out.at(w)`, and gets a Slot that holds its own element, or nothing when that element is past
// the end. A Slot cannot be copied, moved or addressed (like a witness), and gives out no pointer,
// so no thread can reach another thread's element through it.
//
// Inputs are Span<const T> and Span2D<const T>: read-only, readable anywhere, bounds-checked (an
// out-of-bounds read stops the kernel); `get_or` reads with a fallback past the edge, and
// `load_unchecked` skips the check where the caller has proved the index in bounds.
//
// Spans are made only by the host launcher (from tensors whose address ranges it has checked not
// to overlap), never by kernel code.
#pragma once

#include "tessera/simt/config.hpp"
#include "tessera/simt/index.hpp"

namespace tessera::simt {

namespace detail {
struct SpanAccess;
}

// ---- Slot: the one element a thread owns ---------------------------------------------------

// Assigning through *slot writes the element; reading it reads the element. Non-copyable, like
// the Slot it comes from.
template <class T>
class ElementRef {
 public:
  TESSERA_SIMT_PINNED(ElementRef)
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator=(T v) const {
    *p_ = v;
    return *this;
  }
  // Copies the value of another of this thread's elements (not the reference).
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator=(const ElementRef& o) const {
    *p_ = *o.p_;
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator+=(T v) const {
    *p_ += v;
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator-=(T v) const {
    *p_ -= v;
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const ElementRef& operator*=(T v) const {
    *p_ *= v;
    return *this;
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE operator T() const { return *p_; }  // NOLINT: a reference

 private:
  template <class>
  friend class Slot;
  TESSERA_SIMT_HD explicit ElementRef(T* p) : p_(p) {}
  T* p_;
};

// An optional element: `if (auto o = out.at(w)) *o = v;`.
template <class T>
class Slot {
 public:
  TESSERA_SIMT_PINNED(Slot)
  TESSERA_SIMT_HD Slot& operator=(const Slot&) = delete;
  TESSERA_SIMT_HD explicit operator bool() const { return owned_; }
  // The element; stops the kernel when the slot is empty.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE ElementRef<T> operator*() const {
    if (!owned_) detail::trap();
    return ElementRef<T>(p_);
  }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE void store(T v) const { *(*this) = v; }
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE T load() const { return *(*this); }

 private:
  template <class>
  friend class DisjointSpan;
  template <class>
  friend class DisjointSpan2D;
  // (A flag beside the pointer, so that testing the slot is the bounds test itself.)
  TESSERA_SIMT_HD Slot(bool owned, T* p) : owned_(owned), p_(p) {}
  bool owned_;
  T* p_;
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
  // Element j without the bounds check: for loops whose bounds the caller has checked.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const T& load_unchecked(index_t j) const { return data_[j]; }

 private:
  friend struct detail::SpanAccess;
  const T* data_;
  index_t size_;
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
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE const T& load_unchecked(index_t r, index_t c) const {
    return data_[r * pitch_ + c];
  }
  // Row r as a span; stops the kernel when r is out of bounds.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Span<const T> row(index_t r) const;

 private:
  friend struct detail::SpanAccess;
  const T* data_;
  index_t rows_, cols_, pitch_;
};

// ---- outputs -------------------------------------------------------------------------------

template <class T>
class DisjointSpan {
  static_assert(detail::is_element<T>,
                "DisjointSpan<T>: T must be a mutable arithmetic type (bool, an integer type, "
                "float or double); an input is Span<const T>.");

 public:
  using element_type = T;
  TESSERA_SIMT_HD index_t size() const { return size_; }

  // This thread's element, or an empty slot past the end.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T> at(const Index1D& i) const {
    const bool owned = detail::below(i.value(), size_);
    return Slot<T>(owned, owned ? data_ + i.value() : data_);
  }
  // This warp's element, held by lane 0 only; the other lanes get an empty slot.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T> at(const WarpIndex1D& w) const {
    const bool owned = w.lane() == 0 && detail::below(w.warp(), size_);
    return Slot<T>(owned, owned ? data_ + w.warp() : data_);
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
  T* data_;
  index_t size_;
};

// A row-major matrix output: element (r, c) is at data[r * pitch + c].
template <class T>
class DisjointSpan2D {
  static_assert(detail::is_element<T>,
                "DisjointSpan2D<T>: T must be a mutable arithmetic type (bool, an integer type, "
                "float or double); an input is Span2D<const T>.");

 public:
  using element_type = T;
  TESSERA_SIMT_HD index_t rows() const { return rows_; }
  TESSERA_SIMT_HD index_t cols() const { return cols_; }
  TESSERA_SIMT_HD index_t pitch() const { return pitch_; }

  // This thread's element (w.row(), w.col()), or an empty slot outside the matrix.
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T> at(const Index2D& w) const {
    const bool owned = inside(w.row(), w.col());
    return Slot<T>(owned, owned ? data_ + w.row() * pitch_ + w.col() : data_);
  }
  // Element (r, c) of this thread's TM x TN micro-tile (0 <= r < TM, 0 <= c < TN), or an empty
  // slot when (r, c) is outside the micro-tile or the micro-tile's element is outside the matrix.
  template <int BM, int BN, int TM, int TN>
  TESSERA_SIMT_HD TESSERA_SIMT_INLINE Slot<T> at(const TileIndex2D<BM, BN, TM, TN>& t, int r,
                                                 int c) const {
    const bool mine = static_cast<unsigned>(r) < static_cast<unsigned>(TM) &&
                      static_cast<unsigned>(c) < static_cast<unsigned>(TN);
    const index_t gr = t.row0() + r, gc = t.col0() + c;
    const bool owned = mine && inside(gr, gc);
    return Slot<T>(owned, owned ? data_ + gr * pitch_ + gc : data_);
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
  TESSERA_SIMT_HD bool inside(index_t r, index_t c) const {
    return detail::below(r, rows_) && detail::below(c, cols_);
  }
  T* data_;
  index_t rows_, cols_, pitch_;
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

namespace detail {

// How the host launcher (and the host unit tests) make spans. Kernel code has no reason to: a
// span it made would point wherever it liked.
struct SpanAccess {
  template <class T>
  static TESSERA_SIMT_HD Span<const T> input(const T* data, index_t size) {
    Span<const T> s;
    s.data_ = data;
    s.size_ = size;
    return s;
  }
  template <class T>
  static TESSERA_SIMT_HD Span2D<const T> input2d(const T* data, index_t rows, index_t cols,
                                                 index_t pitch) {
    Span2D<const T> s;
    s.data_ = data;
    s.rows_ = rows;
    s.cols_ = cols;
    s.pitch_ = pitch;
    return s;
  }
  template <class T>
  static TESSERA_SIMT_HD DisjointSpan<T> output(T* data, index_t size) {
    DisjointSpan<T> s;
    s.data_ = data;
    s.size_ = size;
    return s;
  }
  template <class T>
  static TESSERA_SIMT_HD DisjointSpan2D<T> output2d(T* data, index_t rows, index_t cols,
                                                    index_t pitch) {
    DisjointSpan2D<T> s;
    s.data_ = data;
    s.rows_ = rows;
    s.cols_ = cols;
    s.pitch_ = pitch;
    return s;
  }
};

}  // namespace detail

template <class T>
TESSERA_SIMT_HD TESSERA_SIMT_INLINE Span<const T> Span2D<const T>::row(index_t r) const {
  if (!detail::below(r, rows_)) detail::trap();
  return detail::SpanAccess::input(data_ + r * pitch_, cols_);
}

}  // namespace tessera::simt

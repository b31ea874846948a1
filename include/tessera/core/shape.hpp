// Shapes of tensors and tiles: a list of extents, outermost first (row-major).
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tessera {

// A list of extents with std::vector<int64_t>'s interface. Ranks up to kInline live inside the
// object: a launch copies several shapes (each argument's shape and strides, the grid), and with
// them inline a repeated launch allocates nothing. Larger ranks go to the heap. Converts to and
// from std::vector<int64_t>.
class Shape {
 public:
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  static constexpr size_t kInline = 4;

  Shape() noexcept = default;
  explicit Shape(size_t n) { resize(n); }
  Shape(size_t n, int64_t value) { assign(n, value); }
  Shape(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) {
    assign(first, last);
  }
  Shape(const std::vector<int64_t>& v) { assign(v.begin(), v.end()); }  // NOLINT: implicit
  // An inline shape is copied as one fixed block (a launch copies and moves several per argument).
  Shape(const Shape& o) {
    if (o.heap_)
      assign(o.begin(), o.end());
    else
      copy_inline(o);
  }
  Shape(Shape&& o) noexcept { take(o); }
  Shape& operator=(const Shape& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<int64_t>() const { return std::vector<int64_t>(begin(), end()); }  // NOLINT

  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return heap_ ? cap_ : kInline; }
  size_t max_size() const noexcept { return UINT32_MAX; }
  int64_t* data() noexcept { return heap_ ? heap_ : inline_; }
  const int64_t* data() const noexcept { return heap_ ? heap_ : inline_; }

  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  const_reverse_iterator crbegin() const noexcept { return rbegin(); }
  const_reverse_iterator crend() const noexcept { return rend(); }

  int64_t& operator[](size_t i) noexcept { return data()[i]; }
  const int64_t& operator[](size_t i) const noexcept { return data()[i]; }
  int64_t& at(size_t i) {
    if (i >= size_) throw std::out_of_range("Shape::at: index past the rank");
    return data()[i];
  }
  const int64_t& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("Shape::at: index past the rank");
    return data()[i];
  }
  int64_t& front() noexcept { return data()[0]; }
  const int64_t& front() const noexcept { return data()[0]; }
  int64_t& back() noexcept { return data()[size_ - 1]; }
  const int64_t& back() const noexcept { return data()[size_ - 1]; }

  void reserve(size_t n) {
    if (n > capacity()) grow(n);
  }
  void clear() noexcept { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = static_cast<uint32_t>(n);
  }
  void push_back(int64_t v) {
    if (size_ == capacity()) grow(size_ + 1);
    data()[size_++] = v;
  }
  int64_t& emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  void pop_back() noexcept { --size_; }

  void assign(size_t n, int64_t value) {
    clear();
    resize(n, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    clear();
    if constexpr (std::forward_iterator<It>)
      reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  void assign(std::initializer_list<int64_t> values) { assign(values.begin(), values.end()); }

  iterator insert(const_iterator pos, int64_t v) { return insert(pos, size_t{1}, v); }
  iterator insert(const_iterator pos, size_t n, int64_t v) {
    const size_t at = open(pos, n);
    std::fill(data() + at, data() + at + n, v);
    return data() + at;
  }
  template <std::input_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    // Copied first: the range may be this shape's own elements, which open() moves.
    const Shape values(first, last);
    const size_t at = open(pos, values.size());
    std::copy(values.begin(), values.end(), data() + at);
    return data() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - begin());
    const size_t n = static_cast<size_t>(last - first);
    std::copy(data() + at + n, end(), data() + at);
    size_ -= static_cast<uint32_t>(n);
    return data() + at;
  }
  void swap(Shape& o) noexcept {
    Shape t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }
  friend void swap(Shape& a, Shape& b) noexcept { a.swap(b); }

  friend bool operator==(const Shape& a, const Shape& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend std::strong_ordering operator<=>(const Shape& a, const Shape& b) noexcept {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  // Makes room for n elements at pos (moving the tail); returns pos as an index.
  size_t open(const_iterator pos, size_t n) {
    const size_t at = static_cast<size_t>(pos - begin());
    reserve(size_ + n);
    std::copy_backward(data() + at, end(), end() + n);
    size_ += static_cast<uint32_t>(n);
    return at;
  }
  void grow(size_t need) {
    if (need > max_size()) throw std::length_error("Shape: rank too large");
    const size_t cap = std::max(need, 2 * capacity());
    int64_t* fresh = new int64_t[cap];
    std::copy(begin(), end(), fresh);
    delete[] heap_;
    heap_ = fresh;
    cap_ = static_cast<uint32_t>(cap);
  }
  void release() noexcept {
    delete[] heap_;
    heap_ = nullptr;
    size_ = 0;
    cap_ = 0;
  }
  // From o, which is left empty; this holds nothing.
  void take(Shape& o) noexcept {
    size_ = o.size_;
    if (o.heap_) {
      heap_ = o.heap_;
      cap_ = o.cap_;
      o.heap_ = nullptr;
      o.cap_ = 0;
    } else {
      copy_inline(o);
    }
    o.size_ = 0;
  }
  // o's inline elements, all kInline of them (always initialized): a fixed-size copy, with no
  // loop or call. This holds nothing on the heap.
  void copy_inline(const Shape& o) noexcept {
    std::memcpy(inline_, o.inline_, sizeof inline_);
    size_ = o.size_;
  }

  int64_t* heap_ = nullptr;  // null while the elements are inline
  uint32_t size_ = 0;
  uint32_t cap_ = 0;  // of heap_
  int64_t inline_[kInline] = {};
};

// A rank not fixed at compile time (Tensor<T>, In<T>): it is checked at launch instead.
inline constexpr int kDynamicRank = -1;

// The element count. Throws UsageError, naming the shape, when it does not fit int64_t: every
// shape a Tensor, a partition or a tile holds was checked where it was made, so this is the last
// line of defence against a wrapped count.
int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "[8, 128]"
// ceil(a / b) for a >= 0 and b > 0, without the overflow of (a + b - 1) / b near INT64_MAX.
inline int64_t ceil_div(int64_t a, int64_t b) {
  return a / b + (a % b != 0 ? 1 : 0);
}
Shape row_major_strides(const Shape& s);

}  // namespace tessera

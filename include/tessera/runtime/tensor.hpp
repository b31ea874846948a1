// Host-side tensors. Tensor<T, R> is a typed handle (R: a rank fixed at compile time, or
// kDynamicRank); copies share storage. Partition<T, R> is an output cut into disjoint tiles: it is
// made by consuming the only handle to its storage, so nothing else can read or write that
// storage while kernels write it, and it is turned back into a Tensor by unpartition().
// Accumulation<T, R> is a tensor handed whole to a launch whose blocks add into it (Accum<T>),
// made and given back the same way.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "tessera/runtime/tensor_handle.hpp"

namespace tessera {

template <Element T, int R = kDynamicRank>
class Tensor;
template <Element T, int R = kDynamicRank>
class Partition;
template <Element T, int R = kDynamicRank>
class Accumulation;

namespace runtime {
// Checks that `h` may be partitioned into tiles of `tile` and returns the grid.
Shape check_partition(const TensorHandle& h, const Shape& tile, SourceLoc loc);
// Checks that `h` may be accumulated into by a launch over `grid` (empty: the grid of the
// launch's Out partitions).
void check_accumulation(const TensorHandle& h, const Shape& grid, SourceLoc loc);
template <class...>
inline constexpr bool always_false = false;
// The launchers' read-only view of a tensor's or a partition's handle (for its shape, device,
// use count and byte range). What a handle shows is harmless on its own (tensor_handle.hpp): no
// address, no reads, no writes, no copies. Nothing here takes a handle out of a tensor or builds a
// tensor over one.
struct HandleAccess {
  template <class X>
  static const TensorHandle& of(const X& x) {
    return x.handle_;
  }
  // The mark that lets a partition's handle be a launch's output (PartitionMark).
  template <Element T, int R>
  static PartitionMark mark(const Partition<T, R>& p) {
    return PartitionMark(&p.handle_);
  }
  template <Element T, int R>
  static PartitionMark mark(const Accumulation<T, R>& p) {
    return PartitionMark(&p.handle_);
  }
};
// Makes tensors over memory another library lent through DLPack (dlpack.hpp): the handle it wraps
// is a fresh one over borrowed storage, never an existing tensor's.
struct DLPackTensors;
// Makes tensors over new storage, for the creation functions below. Nothing here takes an
// existing handle, so nothing here can reach storage that a tensor, a partition or a launch holds.
struct NewTensor {
  template <class X>
  static X allocated(Shape shape, Device device, SourceLoc loc) {
    return X(
        TensorHandle::allocate(dtype_v<typename X::element_type>, std::move(shape), device, loc));
  }
  template <class X>
  static X filled(Shape shape, double value, Device device, SourceLoc loc) {
    TensorHandle h =
        TensorHandle::allocate(dtype_v<typename X::element_type>, std::move(shape), device, loc);
    h.fill(value);
    return X(std::move(h));
  }
  // `src` holds numel(shape) elements, row-major.
  template <class X>
  static X copied(const typename X::element_type* src, Shape shape, Device device, SourceLoc loc) {
    TensorHandle h =
        TensorHandle::allocate(dtype_v<typename X::element_type>, std::move(shape), device, loc);
    h.write_from_host(src);
    return X(std::move(h));
  }
  template <class X>
  static X wrapping_unchecked(typename X::element_type* data, Shape shape, Device device,
                              SourceLoc loc) {
    return X(TensorHandle::wrap_unowned(dtype_v<typename X::element_type>, std::move(shape), device,
                                        static_cast<void*>(data), loc));
  }
};
}  // namespace runtime

template <Element T, int R>
class Tensor {
 public:
  using element_type = T;
  static constexpr int static_rank = R;

  Tensor() = default;  // empty: holds nothing, like a moved-from tensor
  // A dynamic-rank tensor from a static-rank one (shares the storage).
  template <int R2>
  requires(R == kDynamicRank && R2 != kDynamicRank) Tensor(const Tensor<T, R2>& other)
      : handle_(other.handle_) {}  // NOLINT
  // A static-rank tensor from a dynamic-rank one; the rank is checked.
  template <int R2>
  requires(R != kDynamicRank && R2 == kDynamicRank) explicit Tensor(
      const Tensor<T, R2>& other, std::source_location l = std::source_location::current())
      : handle_(other.handle_) {
    if (handle_.rank() != R)
      fail_at<UsageError>(l, "a tensor of rank ", handle_.rank(), " cannot be a Tensor of rank ",
                          R);
  }

  const Shape& shape() const { return alive().shape(); }
  int64_t dim(int axis) const { return alive().shape().at(axis); }
  int rank() const { return alive().rank(); }
  int64_t numel() const { return alive().numel(); }
  Device device() const { return alive().device(); }
  DType dtype() const { return dtype_v<T>; }
  bool empty() const { return handle_.empty(); }
  // What the handle describes (strides, use count, storage identity); it gives no access to the
  // elements (tensor_handle.hpp), so holding it is no route around the ownership rules.
  const runtime::TensorHandle& handle() const { return handle_; }

  // The address of element [0, ..., 0] (on the tensor's device), for code outside Tessera. The
  // pointer is a handle the ownership checks cannot count, so taking it marks the storage escaped
  // (Storage::escaped()), for good: no launch writes it again (partition() and SIMT outputs refuse
  // it; write a copy, t.to(t.device())). Launches may still read it; in exchange the caller
  // promises that nothing writes through the pointer while a launch that reads this storage is
  // pending, and that the pointer is not used after the last handle to the storage is gone.
  T* unchecked_data(std::source_location l = std::source_location::current()) const {
    handle_.check_alive(l);
    return static_cast<T*>(handle_.escape());
  }

  // The elements in row-major order.
  std::vector<T> to_vector(std::source_location l = std::source_location::current()) const {
    handle_.check_alive(l);
    std::vector<T> out(static_cast<size_t>(handle_.numel()));
    handle_.read_to_host(out.data());
    return out;
  }
  // A contiguous copy on `device` (a new storage, even on the same device).
  Tensor to(Device device) const { return Tensor(alive().copy_to(device)); }
  // A view of [begin, end) along `axis`; it shares the storage.
  Tensor slice(int axis, int64_t begin, int64_t end,
               std::source_location l = std::source_location::current()) const {
    return Tensor(handle_.slice(axis, begin, end, l));
  }

  // Cuts the tensor into tiles of `tile` (ragged edge tiles allowed). Consumes the tensor, which
  // must be the only handle to its storage.
  template <size_t N>
  Partition<T, R> partition(const int64_t (&tile)[N],
                            std::source_location l = std::source_location::current()) && {
    static_assert(R == kDynamicRank || static_cast<int>(N) == R,
                  "partition(): the tile shape must have one extent per axis of the tensor");
    return std::move(*this).partition(Shape(tile, tile + N), l);
  }
  Partition<T, R> partition(Shape tile,
                            std::source_location l = std::source_location::current()) && {
    runtime::check_partition(handle_, tile, l);
    return Partition<T, R>(std::move(handle_), std::move(tile));
  }
  // Hands the whole tensor to one launch whose blocks add into it (an Accum<T> parameter), over
  // a grid of `grid` blocks, or, with no grid, over the grid of the launch's Out
  // partitions. Consumes the tensor, which must be the only handle to its storage; the adds land
  // on what it holds (start from zeros() for a plain sum).
  Accumulation<T, R> accumulate(Shape grid = {},
                                std::source_location l = std::source_location::current()) && {
    runtime::check_accumulation(handle_, grid, l);
    return Accumulation<T, R>(std::move(handle_), std::move(grid));
  }
  template <class... A>
  void accumulate(A&&...) const& {
    static_assert(runtime::always_false<A...>,
                  "accumulate() consumes the tensor, so that no other handle can reach the "
                  "storage that kernels add into: write std::move(t).accumulate(grid)");
  }

  // partition() on an lvalue: these overloads exist only to say why it does not compile. The
  // array form catches the usual t.partition({128}), which the variadic one cannot deduce.
  template <size_t N>
  void partition(const int64_t (&tile)[N]) const& {
    lvalue_partition<decltype(tile)>();
  }
  template <class... A>
  void partition(A&&...) const& {
    lvalue_partition<A...>();
  }

 private:
  template <class... A>
  static void lvalue_partition() {
    static_assert(runtime::always_false<A...>,
                  "partition() consumes the tensor, so that no other handle can reach the "
                  "storage that kernels will write: write std::move(t).partition(tile)");
  }
  friend struct runtime::HandleAccess;
  friend struct runtime::NewTensor;
  friend struct runtime::DLPackTensors;
  template <Element, int>
  friend class Partition;
  template <Element, int>
  friend class Accumulation;
  template <Element, int>
  friend class Tensor;
  explicit Tensor(runtime::TensorHandle h) : handle_(std::move(h)) {}
  const runtime::TensorHandle& alive() const {
    handle_.check_alive();
    return handle_;
  }
  runtime::TensorHandle handle_;
};

template <Element T, int R>
class Partition {
 public:
  using element_type = T;
  static constexpr int static_rank = R;
  static constexpr bool kIsPartition = true;

  // Move-only: a copy would be a second handle through which kernels could write the same tiles.
  Partition(Partition&&) noexcept = default;
  Partition& operator=(Partition&&) noexcept = default;
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  const Shape& shape() const { return alive().shape(); }
  const Shape& tile_shape() const { return tile_; }
  // Tiles along each axis: ceil(extent / tile).
  Shape grid() const {
    Shape g;
    for (size_t d = 0; d < tile_.size(); ++d) g.push_back(ceil_div(shape()[d], tile_[d]));
    return g;
  }
  Device device() const { return alive().device(); }
  // The storage (for identity checks); no handle to it is handed out while it is partitioned.
  const runtime::Storage* storage() const { return handle_.storage(); }

  // The whole tensor again.
  Tensor<T, R> unpartition() && {
    handle_.check_alive();
    return Tensor<T, R>(std::move(handle_));
  }

 private:
  friend struct runtime::HandleAccess;
  friend class Tensor<T, R>;
  Partition(runtime::TensorHandle h, Shape tile) : handle_(std::move(h)), tile_(std::move(tile)) {}
  const runtime::TensorHandle& alive() const {
    handle_.check_alive();
    return handle_;
  }
  runtime::TensorHandle handle_;
  Shape tile_;
};

// A tensor handed whole to the launches of a kernel with an Accum<T> parameter: move-only, like a
// Partition, since a copy would be a second handle to storage that kernels write.
template <Element T, int R>
class Accumulation {
 public:
  using element_type = T;
  static constexpr int static_rank = R;

  Accumulation(Accumulation&&) noexcept = default;
  Accumulation& operator=(Accumulation&&) noexcept = default;
  Accumulation(const Accumulation&) = delete;
  Accumulation& operator=(const Accumulation&) = delete;

  const Shape& shape() const { return alive().shape(); }
  // The launch grid it declares (empty: the launch's Out partitions define it).
  const Shape& grid() const { return grid_; }
  Device device() const { return alive().device(); }
  const runtime::Storage* storage() const { return handle_.storage(); }

  // The tensor again, holding the sums.
  Tensor<T, R> tensor() && {
    handle_.check_alive();
    return Tensor<T, R>(std::move(handle_));
  }

 private:
  friend struct runtime::HandleAccess;
  friend class Tensor<T, R>;
  Accumulation(runtime::TensorHandle h, Shape grid)
      : handle_(std::move(h)), grid_(std::move(grid)) {}
  const runtime::TensorHandle& alive() const {
    handle_.check_alive();
    return handle_;
  }
  runtime::TensorHandle handle_;
  Shape grid_;
};

// ---- creation ------------------------------------------------------------------------------
// Each makes new storage. A shape whose element or byte count overflows is a UsageError, and
// memory that cannot be had an OutOfMemoryError naming the size and the device, at the call.

template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> empty(const int64_t (&shape)[N], Device device = default_device(),
                                     std::source_location l = std::source_location::current()) {
  return runtime::NewTensor::allocated<Tensor<T, static_cast<int>(N)>>(Shape(shape, shape + N),
                                                                       device, l);
}
template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> full(const int64_t (&shape)[N], T value,
                                    Device device = default_device(),
                                    std::source_location l = std::source_location::current()) {
  using Arithmetic = std::conditional_t<std::is_arithmetic_v<T>, T, float>;
  return runtime::NewTensor::filled<Tensor<T, static_cast<int>(N)>>(
      Shape(shape, shape + N), static_cast<double>(static_cast<Arithmetic>(value)), device, l);
}
template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> zeros(const int64_t (&shape)[N], Device device = default_device(),
                                     std::source_location l = std::source_location::current()) {
  return full<T>(shape, T(0), device, l);
}
template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> ones(const int64_t (&shape)[N], Device device = default_device(),
                                    std::source_location l = std::source_location::current()) {
  return full<T>(shape, T(1), device, l);
}
// 0, 1, ..., n-1.
template <Element T>
Tensor<T, 1> arange(int64_t n, Device device = default_device(),
                    std::source_location l = std::source_location::current()) {
  if (n < 0) fail_at<UsageError>(l, "arange(", n, "): the count is negative; pass n >= 0");
  std::vector<T> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_arithmetic_v<T>)
      v[i] = static_cast<T>(i);  // exact past 2^24
    else
      v[i] = T(static_cast<float>(i));
  }
  return runtime::NewTensor::copied<Tensor<T, 1>>(v.data(), Shape{n}, device, l);
}
// A tensor of `shape` holding `data` (row-major).
template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> from_host(std::span<const T> data, const int64_t (&shape)[N],
                                         Device device = default_device(),
                                         std::source_location l = std::source_location::current()) {
  Shape s(shape, shape + N);
  // numel() before anything is allocated: a count that wraps must not match the data's size.
  int64_t count = 0;
  try {
    count = numel(s);
  } catch (const UsageError& e) {
    fail_at<UsageError>(l, e.what());
  }
  if (static_cast<int64_t>(data.size()) != count)
    fail_at<UsageError>(l, "from_host: ", data.size(), " values for a tensor of shape ",
                        to_string(s), " (", count, " elements)");
  return runtime::NewTensor::copied<Tensor<T, static_cast<int>(N)>>(data.data(), std::move(s),
                                                                    device, l);
}
template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> from_host(const std::vector<T>& data, const int64_t (&shape)[N],
                                         Device device = default_device(),
                                         std::source_location l = std::source_location::current()) {
  return from_host<T, N>(std::span<const T>(data), shape, device, l);
}
template <Element T>
Tensor<T, 1> from_host(const std::vector<T>& data, Device device = default_device(),
                       std::source_location l = std::source_location::current()) {
  return from_host<T, 1>(std::span<const T>(data), {static_cast<int64_t>(data.size())}, device, l);
}

// Memory the caller owns and keeps alive for as long as the tensor (and every launch using it)
// lives. Unchecked: two wraps of one buffer are two storages, so the launcher also checks the
// address ranges of outputs against every other argument; and the caller, who holds the pointer,
// promises not to touch the memory while a launch uses it.
template <Element T, size_t N>
Tensor<T, static_cast<int>(N)> wrap_unowned_unchecked(
    T* data, const int64_t (&shape)[N], Device device = Device::cpu(),
    std::source_location l = std::source_location::current()) {
  return runtime::NewTensor::wrapping_unchecked<Tensor<T, static_cast<int>(N)>>(
      data, Shape(shape, shape + N), device, l);
}

}  // namespace tessera

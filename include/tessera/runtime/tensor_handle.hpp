// The untyped core of Tensor<T>: a handle to shared storage plus a strided view of it. Copies of
// a handle share the storage (a reference count); the count is how the runtime knows whether a
// handle is the only one, which partition() requires. A moved-from handle is empty, and every use
// of it is an OwnershipError.
#pragma once

#include <cstddef>
#include <memory>

#include "tessera/core/dtype.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

// Device memory with its owner's lifetime. Never shared between two Storage objects.
class Storage {
 public:
  // Allocates `bytes` on `device` (memory is not initialised).
  Storage(Device device, size_t bytes);
  // Memory the caller owns and keeps alive (wrap_unowned); never freed here.
  Storage(Device device, void* data, size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  Device device() const { return device_; }
  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  Device device_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool owned_ = true;
};

class TensorHandle {
 public:
  TensorHandle() = default;  // empty, as after a move
  TensorHandle(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Shape strides,
               int64_t offset);
  TensorHandle(const TensorHandle&) = default;
  TensorHandle& operator=(const TensorHandle&) = default;
  TensorHandle(TensorHandle&& o) noexcept;
  TensorHandle& operator=(TensorHandle&& o) noexcept;

  // A fresh contiguous tensor (contents unspecified).
  static TensorHandle allocate(DType dtype, Shape shape, Device device);

  bool empty() const { return storage_ == nullptr; }
  // Throws OwnershipError, at loc, if the handle was moved from.
  void check_alive(SourceLoc loc = {}) const;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return tessera::numel(shape_); }
  Device device() const;
  // Address of element [0, ..., 0].
  void* data() const;
  bool contiguous() const;
  // How many handles (copies, views, pending launches) share the storage.
  long use_count() const { return storage_.use_count(); }
  const Storage* storage() const { return storage_.get(); }
  // Bytes spanned: [first, last) addresses the view can touch.
  std::pair<const std::byte*, const std::byte*> byte_range() const;

  // A view of [begin, end) along `axis`, sharing the storage.
  TensorHandle slice(int axis, int64_t begin, int64_t end, SourceLoc loc = {}) const;

  // Copies between this tensor's elements (in row-major order) and contiguous host memory.
  // Writing needs a mutable handle: a const one (an In argument, Tensor::handle()) only reads.
  void write_from_host(const void* src);
  void read_to_host(void* dst) const;
  // Sets every element to `value` converted to the dtype.
  void fill(double value);
  // A contiguous copy on `device` (through host memory when the devices differ).
  TensorHandle copy_to(Device device) const;

 private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  Shape shape_, strides_;
  int64_t offset_ = 0;  // in elements
};

}  // namespace tessera::runtime

// The untyped core of Tensor<T>: a handle to shared storage plus a strided view of it. Copies of
// a handle share the storage (a reference count); the count is how the runtime knows whether a
// handle is the only one, which partition() requires. A moved-from handle is empty, and every use
// of it is an OwnershipError.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera {
template <Element T, int R>
class Tensor;
template <Element T, int R>
class Partition;
}  // namespace tessera

namespace tessera::runtime {

class Completion;     // launch.hpp
class PendingAccess;  // src/runtime/pending_access.hpp

// Device memory with its owner's lifetime. Never shared between two Storage objects. Its address
// is not public: a raw pointer is a handle the ownership checks cannot count, so the only route to
// one is Tensor::unchecked_data(), which marks the storage escaped.
class Storage {
 public:
  // Allocates `bytes` on `device` (memory is not initialised). Throws OutOfMemoryError, naming the
  // size and the device, when the memory cannot be had.
  Storage(Device device, size_t bytes);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  Device device() const { return device_; }
  size_t bytes() const { return bytes_; }
  // Whether a mutable address of this storage was handed out (Tensor::unchecked_data()). What is
  // done through it is out of the checks' sight, so a launch never writes escaped storage
  // (partition() and SIMT outputs refuse it); launches may still read it, and the caller of
  // unchecked_data() promised that nothing writes through the pointer while they do.
  bool escaped() const { return escaped_.load(std::memory_order_relaxed); }
  // Whether this is caller memory (wrap_unowned_unchecked), which is never freed here.
  bool unowned() const { return !owned_; }

 private:
  friend class TensorHandle;
  // Memory the caller owns and keeps alive (wrap_unowned_unchecked); never freed here.
  Storage(Device device, void* data, size_t bytes);

  // The launches that may still be using this memory, kept by the runtime
  // (src/runtime/pending_access.cpp): the last launch that writes it, and the launches that read
  // it since. A later launch is ordered after them (a reader after the writer, a writer after
  // both), a host read waits for the writer, and the memory is not freed before they finish. A
  // pending launch is not a handle: it does not count in use_count(), so the sole handle to a
  // tensor that pending launches read may be partitioned, and the writing launch then runs after
  // them.
  friend class PendingAccess;
  friend class HandleInternals;
  mutable std::mutex pending_mu_;
  mutable std::shared_ptr<Completion> writer_;
  mutable std::vector<std::shared_ptr<Completion>> readers_;
  // readers_ is pruned of finished launches when it reaches this size, which then doubles past
  // what is left: asking every reader on every launch would cost a driver query each.
  mutable size_t prune_readers_at_ = 8;

  Device device_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  bool owned_ = true;
  // Lent memory whose lender reuses it in the order of this GPU stream (from_dlpack_unchecked with
  // a stream): at the end, that stream waits on the device for the launches still using the memory,
  // and the host does not wait. Null: the host waits for them before the lender gets it back.
  void* release_stream_ = nullptr;
  std::atomic<bool> escaped_{false};  // set by any thread that takes the address
};

// Bytes of a contiguous `dtype` tensor of `shape`. Throws UsageError, naming the shape, when the
// element count or the byte count does not fit 64 bits.
size_t byte_size(DType dtype, const Shape& shape);

class HandleInternals;
struct NewTensor;
struct HandleAccess;

// What users can see of a handle is what it describes (dtype, shape, strides, device, how many
// handles share its storage, which bytes it spans, as numbers): nothing here reads, writes,
// copies or points into the storage. Those are private, for the typed tensors, the factories and
// the runtime's own launchers, so that holding a handle -- an input's, through Tensor::handle(), or
// a partition's, through the launcher's access -- gives no route to memory a launch owns.
class TensorHandle {
 public:
  TensorHandle() = default;  // empty, as after a move
  // Inline: a launch moves its arguments' handles about ten times on the way into its Future
  // and back out. The moved-from handle is empty (its storage_ null).
  TensorHandle(TensorHandle&& o) noexcept
      : storage_(std::move(o.storage_)),
        dtype_(o.dtype_),
        shape_(std::move(o.shape_)),
        strides_(std::move(o.strides_)),
        offset_(o.offset_) {}
  TensorHandle& operator=(TensorHandle&& o) noexcept {
    if (this != &o) {
      storage_ = std::move(o.storage_);
      dtype_ = o.dtype_;
      shape_ = std::move(o.shape_);
      strides_ = std::move(o.strides_);
      offset_ = o.offset_;
    }
    return *this;
  }

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
  bool contiguous() const;
  // How many handles (copies, views, pending launches) share the storage.
  long use_count() const { return storage_.use_count(); }
  // The storage, for identity and its facts; it hands out no address.
  const Storage* storage() const { return storage_.get(); }
  // The address of element [0, ..., 0] and the bytes [first, last) the view can touch, as
  // numbers: for alignment and overlap checks, not for access.
  uintptr_t address() const;
  std::pair<uintptr_t, uintptr_t> byte_range() const;

 private:
  template <Element, int>
  friend class ::tessera::Tensor;
  template <Element, int>
  friend class ::tessera::Partition;
  friend class HandleInternals;
  friend struct NewTensor;

  TensorHandle(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Shape strides,
               int64_t offset);
  // A copy is one more handle to the storage: only a Tensor copy (or the runtime) makes one.
  TensorHandle(const TensorHandle&) = default;
  TensorHandle& operator=(const TensorHandle&) = default;

  // A fresh contiguous tensor (contents unspecified). Throws UsageError, at loc, for a negative
  // extent or a size that overflows; OutOfMemoryError when the memory cannot be had.
  static TensorHandle allocate(DType dtype, Shape shape, Device device, SourceLoc loc = {});
  // Caller memory of `shape` at `data` (wrap_unowned_unchecked).
  static TensorHandle wrap_unowned(DType dtype, Shape shape, Device device, void* data,
                                   SourceLoc loc = {});

  // Address of element [0, ..., 0].
  void* data() const;
  // The same, handed to the user: marks the storage escaped (Storage::escaped()).
  void* escape() const;

  // A view of [begin, end) along `axis`, sharing the storage.
  TensorHandle slice(int axis, int64_t begin, int64_t end, SourceLoc loc = {}) const;

  // Copies between this tensor's elements (in row-major order) and contiguous host memory.
  void write_from_host(const void* src);
  void read_to_host(void* dst) const;
  // Sets every element to `value` converted to the dtype.
  void fill(double value);
  // A contiguous copy on `device` (through host memory when the devices differ).
  TensorHandle copy_to(Device device) const;

  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  Shape shape_, strides_;
  int64_t offset_ = 0;  // in elements
};

// Proof that a launch argument's handle is a partition's: an Out argument needs one
// (check_launch), and only HandleAccess::mark(), given a Partition, makes one. So a hand-made
// LaunchArg cannot make a plain tensor's handle (shared with copies, or an input's) an output:
// it has no mark, or a mark of another handle.
class PartitionMark {
 public:
  PartitionMark() = default;  // marks nothing
  // Whether this marks `h` (a partition's handle).
  bool marks(const TensorHandle* h) const { return handle_ != nullptr && handle_ == h; }

 private:
  friend struct HandleAccess;
  explicit PartitionMark(const TensorHandle* h) : handle_(h) {}
  const TensorHandle* handle_ = nullptr;
};

}  // namespace tessera::runtime

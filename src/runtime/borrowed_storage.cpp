// Storage lent by another owner (DLPack): Tessera's handles count it like any storage, and the
// lender's release runs when the last of them is gone.
#include <memory>
#include <utility>

#include "handle_internals.hpp"

namespace tessera::runtime {

namespace {
// Owns the unowned Storage and the lender's release. Every handle shares this object's count
// (through an aliasing shared_ptr), so the release runs after the last handle, and after the
// Storage, which never frees lent memory, is gone.
struct Lent {
  std::shared_ptr<Storage> storage;
  std::function<void()> release;
  Lent(std::shared_ptr<Storage> s, std::function<void()> r)
      : storage(std::move(s)), release(std::move(r)) {}
  Lent(const Lent&) = delete;
  Lent& operator=(const Lent&) = delete;
  ~Lent() {
    storage.reset();
    if (release) release();
  }
};
}  // namespace

TensorHandle HandleInternals::borrow(DType dtype, Shape shape, Shape strides, Device device,
                                     void* base, size_t span_bytes, std::function<void()> release,
                                     void* release_stream) {
  // The storage spans the bytes the view can reach (as bytes: the view's own dtype and shape are
  // set below).
  TensorHandle bytes =
      TensorHandle::wrap_unowned(DType::U8, Shape{static_cast<int64_t>(span_bytes)}, device, base);
  bytes.storage_->release_stream_ = release_stream;
  auto lent = std::make_shared<Lent>(std::move(bytes.storage_), std::move(release));
  std::shared_ptr<Storage> shared(lent, lent->storage.get());
  return TensorHandle(std::move(shared), dtype, std::move(shape), std::move(strides), 0);
}

}  // namespace tessera::runtime

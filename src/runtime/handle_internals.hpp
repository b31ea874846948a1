// What the runtime's own launchers may do with a handle and users may not: take the address of
// its elements to hand to a backend. Declared a friend by TensorHandle, defined only here, outside
// include/: no public header reaches it.
#pragma once

#include <functional>

#include "tessera/runtime/tensor_handle.hpp"

namespace tessera::runtime {

class HandleInternals {
 public:
  // The address of element [0, ..., 0], for a launch that owns (or reads) the argument: not an
  // escape, since the launch's future holds the handle until the work is done.
  static void* data(const TensorHandle& h) { return h.data(); }
  // One more handle to h's storage (a DLPack export holds one until its consumer lets go).
  static TensorHandle copy(const TensorHandle& h) { return h; }
  // The storage itself, shared: a graph holds one for each storage it captures (graph.cpp).
  static std::shared_ptr<Storage> storage(const TensorHandle& h) { return h.storage_; }
  // A handle over memory another owner lent (DLPack): `span_bytes` at `base`, viewed as `shape`
  // with `strides` (in elements, non-negative) from `base`. `release` runs once, when the last
  // handle to the storage is gone. The storage is unowned (never freed here) and not escaped.
  // `release_stream` (a CUstream, or null): the lender reuses the memory in that stream's order,
  // so `release` runs at once and the stream waits on the device for the launches still using it
  // (Storage::release_stream_); null: the host waits for them first.
  static TensorHandle borrow(DType dtype, Shape shape, Shape strides, Device device, void* base,
                             size_t span_bytes, std::function<void()> release,
                             void* release_stream = nullptr);
};

}  // namespace tessera::runtime

// A word of pinned host memory that a stream writes numbers into, in stream order: after the work
// queued before it, the device writes the number (cuStreamWriteValue64, whose default fences the
// work's memory writes first). The host reads how far the stream has got with a load, no driver
// call: a wait for work the stream has passed costs what reading memory costs, where asking an
// event costs a driver call (about a microsecond on an H100 host, a third of a launch).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>

#include "tessera/backend/cuda/context.hpp"

namespace tessera::backend::cuda {

class StreamCounter {
 public:
  // A counter reading 0, or null where the device lacks 64-bit stream memory operations or no
  // pinned memory can be had (callers then ask events, as before). Never throws.
  static std::unique_ptr<StreamCounter> make(const DeviceContext& ctx) noexcept;
  // Hands the word back for reuse once the last write queued has landed; else leaves it (a
  // write still queued may land later).
  ~StreamCounter();
  StreamCounter(const StreamCounter&) = delete;
  StreamCounter& operator=(const StreamCounter&) = delete;

  // Queues on `stream` the write of `value` after the work queued there so far. Values only grow.
  // Throws BackendError if the driver refuses.
  void write_after(CUstream stream, uint64_t value);
  // The largest value the device has written (0 before any).
  uint64_t read() const noexcept { return __atomic_load_n(word_, __ATOMIC_ACQUIRE); }

 private:
  StreamCounter(const DeviceContext& ctx, uint64_t* word, CUdeviceptr device_word)
      : ctx_(&ctx), word_(word), device_word_(device_word) {}
  const DeviceContext* ctx_;
  uint64_t* word_;  // in pinned host memory, written by the device
  CUdeviceptr device_word_;
  uint64_t last_queued_ = 0;
};

}  // namespace tessera::backend::cuda

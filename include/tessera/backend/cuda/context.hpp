// One GPU as Tessera uses it: the device's primary context (shared with any other CUDA user in the
// process, such as PyTorch), one stream on which all of Tessera's work for the device runs in
// order (allocations, copies, launches, frees), and the device's default memory pool.
//
// Contexts and streams are made on first use of a device and live as long as the process: they
// are never destroyed, because static destructors may run after the driver has shut down, and
// the driver releases everything at exit.
#pragma once

#include <cuda.h>

#include "tessera/backend/cuda/device.hpp"

namespace tessera::backend::cuda {

class DeviceContext {
 public:
  // Makes the primary context current on the calling thread (cheap; call before any driver call
  // that works in a context).
  void make_current() const;

  int ordinal() const { return props_.ordinal; }
  const DeviceProps& props() const { return props_; }
  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }
  CUstream stream() const { return stream_; }
  // The stream-ordered pool (the device's default pool), or nullptr where the device has none
  // and memory comes from cuMemAlloc.
  CUmemoryPool pool() const { return pool_; }

 private:
  friend const DeviceContext& device_context(int ordinal);
  explicit DeviceContext(int ordinal);

  DeviceProps props_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
};

// The context of GPU `ordinal`, made on first use (thread-safe). Throws UsageError for a GPU that
// does not exist or is older than sm_80, BackendError when the driver fails.
const DeviceContext& device_context(int ordinal);

}  // namespace tessera::backend::cuda

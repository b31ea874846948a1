// A point on a device's stream that the host can ask about or wait for: how a GPU launch
// completes. Events are recycled through a per-process pool, since one is recorded per launch.
#pragma once

#include <cuda.h>

#include "tessera/backend/cuda/context.hpp"

namespace tessera::backend::cuda {

class Event {
 public:
  // Records a new event on the device's stream, after the work queued so far.
  explicit Event(const DeviceContext& ctx);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // True once the work before the event has finished; throws BackendError if it failed.
  bool query() const;
  // Blocks until the work before the event has finished; throws BackendError if it failed (a
  // kernel that faulted reports here, not at launch).
  void synchronize() const;

 private:
  const DeviceContext* ctx_;
  CUevent event_ = nullptr;
};

}  // namespace tessera::backend::cuda

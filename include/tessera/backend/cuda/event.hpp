// A point on a device's stream that the host can ask about or wait for: how GPU work completes.
// Events are recycled through a per-process pool, and an Event can be recorded again once nobody
// waits for its last record (the runtime records one per several launches: gpu_timeline.hpp).
#pragma once

#include <cuda.h>

#include <atomic>

#include "tessera/backend/cuda/context.hpp"

namespace tessera::backend::cuda {

class Event {
 public:
  // Records a new event on `stream` (the device's own stream when null), after the work queued
  // there so far.
  explicit Event(const DeviceContext& ctx, CUstream stream = nullptr);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  // True once the work before the event has finished; throws BackendError if it failed.
  bool query() const;
  // Blocks until the work before the event has finished; throws BackendError if it failed (a
  // kernel that faulted reports here, not at launch).
  void synchronize() const;
  // Makes work queued next on `waiter` wait for the work before the event, on the device.
  void make_wait(CUstream waiter) const;
  // Records the event again, on `stream` (the device's own when null), after the work queued there
  // so far. Only when nobody queries, waits for or orders on its last record any more.
  void record(CUstream stream = nullptr);
  // The stream the event was recorded on.
  CUstream stream() const { return stream_; }

 private:
  const DeviceContext* ctx_;
  CUevent event_ = nullptr;
  CUstream stream_ = nullptr;
  // Set once a query or a wait saw the work done: later questions cost no driver call (the
  // launch path asks earlier launches' events on every launch).
  mutable std::atomic<bool> complete_{false};
};

}  // namespace tessera::backend::cuda

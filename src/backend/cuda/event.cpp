#include "tessera/backend/cuda/event.hpp"

#include <mutex>
#include <vector>

#include "tessera/backend/cuda/driver.hpp"

namespace tessera::backend::cuda {

namespace {

// Finished events, ready to be recorded again. Creating one costs a driver call; a launch path
// that aims at a few microseconds per kernel reuses them. Leaked on purpose, like the contexts.
struct EventPool {
  std::mutex mu;
  std::vector<std::pair<const DeviceContext*, CUevent>> free;
};
EventPool& pool() {
  static auto* p = new EventPool;
  return *p;
}

CUevent take(const DeviceContext& ctx) {
  {
    EventPool& p = pool();
    std::lock_guard lock(p.mu);
    for (size_t i = p.free.size(); i-- > 0;)
      if (p.free[i].first == &ctx) {
        CUevent e = p.free[i].second;
        p.free.erase(p.free.begin() + static_cast<std::ptrdiff_t>(i));
        return e;
      }
  }
  CUevent e = nullptr;
  // Timing is off: such events are cheaper to record and to wait for.
  TESSERA_CU(cuEventCreate, &e, CU_EVENT_DISABLE_TIMING);
  return e;
}

void give_back(const DeviceContext& ctx, CUevent e) {
  EventPool& p = pool();
  std::lock_guard lock(p.mu);
  p.free.emplace_back(&ctx, e);
}

}  // namespace

Event::Event(const DeviceContext& ctx, CUstream stream)
    : ctx_(&ctx), stream_(stream ? stream : ctx.stream()) {
  ctx.make_current();
  event_ = take(ctx);
  try {
    TESSERA_CU(cuEventRecord, event_, stream_);
  } catch (...) {
    give_back(ctx, event_);
    throw;
  }
}

void Event::record(CUstream stream) {
  stream_ = stream ? stream : ctx_->stream();
  complete_.store(false, std::memory_order_relaxed);
  ctx_->make_current();
  TESSERA_CU(cuEventRecord, event_, stream_);
}

// An event can be recorded again even while the work before its last record still runs.
Event::~Event() {
  give_back(*ctx_, event_);
}

bool Event::query() const {
  if (complete_.load(std::memory_order_acquire)) return true;
  ctx_->make_current();
  const CUresult r = driver().cuEventQuery(event_);
  if (r == CUDA_ERROR_NOT_READY) return false;
  check(r, "cuEventQuery", "waiting for GPU work");
  complete_.store(true, std::memory_order_release);
  return true;
}

void Event::make_wait(CUstream waiter) const {
  // A stream runs its own work in order, and work that is done needs no wait.
  if (waiter == stream_ || complete_.load(std::memory_order_acquire)) return;
  ctx_->make_current();
  TESSERA_CU(cuStreamWaitEvent, waiter, event_, 0);
}

void Event::synchronize() const {
  if (complete_.load(std::memory_order_acquire)) return;
  ctx_->make_current();
  TESSERA_CU_WHILE("waiting for GPU work", cuEventSynchronize, event_);
  complete_.store(true, std::memory_order_release);
}

}  // namespace tessera::backend::cuda

// The CPU backend's launches run here, on a few worker threads, so that a CPU launch returns at
// once like a GPU launch, and ordering and ownership are exercised with real concurrency in CI.
// Private to the runtime (tests include it for CpuQueueHold).
#pragma once

#include <functional>

namespace tessera::runtime {

// Queues `job`; jobs start in the order they were queued. A job that must follow earlier launches
// waits for them on its worker: since those launches were queued earlier, and every worker takes
// the oldest job, each of them has started on some worker before the job that waits for it, so
// the waits cannot deadlock. Throws only std::bad_alloc (nothing is queued then).
void cpu_enqueue(std::function<void()> job);

// While one lives, the workers start no new job (jobs already running finish): tests use it to
// see that a launch returns before its work runs, and that a chain is issued without waits.
class CpuQueueHold {
 public:
  CpuQueueHold();
  ~CpuQueueHold();
  CpuQueueHold(const CpuQueueHold&) = delete;
  CpuQueueHold& operator=(const CpuQueueHold&) = delete;
};

}  // namespace tessera::runtime

#include "cpu_queue.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace tessera::runtime {

namespace {

class CpuQueue {
 public:
  CpuQueue() {
    // Each job spreads its tile blocks over threads of its own (backend/cpu), so a few workers
    // suffice: they let independent launches overlap and give ordering real concurrency to hold
    // against.
    const unsigned n = std::clamp(std::thread::hardware_concurrency(), 2u, 4u);
    for (unsigned i = 0; i < n; ++i) std::thread([this] { work(); }).detach();
  }

  void push(std::function<void()> job) {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }
  void hold(int delta) {
    {
      std::lock_guard lock(mu_);
      holds_ += delta;
    }
    cv_.notify_all();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return holds_ == 0 && !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();  // jobs catch their own errors (launch.cpp)
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  int holds_ = 0;
};

// Never destroyed: the workers live as long as the process, and a storage released during
// static destruction may still wait for a job.
CpuQueue& queue() {
  static CpuQueue* q = new CpuQueue();
  return *q;
}

}  // namespace

void cpu_enqueue(std::function<void()> job) {
  queue().push(std::move(job));
}

CpuQueueHold::CpuQueueHold() {
  queue().hold(1);
}
CpuQueueHold::~CpuQueueHold() {
  queue().hold(-1);
}

}  // namespace tessera::runtime

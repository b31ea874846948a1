#include "cpu_queue.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

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
      if (count_ == jobs_.size()) grow();
      jobs_[(head_ + count_) % jobs_.size()] = std::move(job);
      ++count_;
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
        cv_.wait(lock, [&] { return holds_ == 0 && count_ != 0; });
        job = std::move(jobs_[head_]);
        jobs_[head_] = nullptr;
        head_ = (head_ + 1) % jobs_.size();
        --count_;
      }
      job();  // jobs catch their own errors (launch.cpp)
    }
  }

  // Under mu_: twice the room, the jobs in order from slot 0.
  void grow() {
    std::vector<std::function<void()>> bigger(std::max<size_t>(64, 2 * jobs_.size()));
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(jobs_[(head_ + i) % jobs_.size()]);
    jobs_.swap(bigger);
    head_ = 0;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  // A ring of jobs_.size() slots, count_ of them queued from head_: it keeps its memory, so that
  // queuing a launch allocates nothing once it has grown (a deque allocates a block every few).
  std::vector<std::function<void()>> jobs_;
  size_t head_ = 0, count_ = 0;
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

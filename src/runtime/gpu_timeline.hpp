// The launches queued on one GPU stream, numbered in queue order, and the events that tell how far
// the stream has got. A launch has no event of its own: recording one costs the launch path about
// as much as the rest of the runtime's work (it was a third of the launch call on the H200), and
// most launches are never asked about. An event (a "mark") is recorded every kMarkEvery launches
// and whenever something needs one that no mark covers yet: a wait for the launch, another stream
// ordered after it, or a poll once the stream has passed every mark. A mark covers every launch
// numbered at or before it, since a stream runs its work in order. A mark recorded on demand
// covers the launches queued after the one asked about too, and a wait on it waits for them: a
// stream whose waits keep doing that gets a mark per launch for a while (wait()). (A word of
// host memory that each mark also had the stream write, cuStreamWriteValue64, so that a wait for a
// passed launch reads memory instead of asking an event, halved sync() in bench/launch's ring on
// an H100, 1.03-1.06 -> 0.47-0.48 us, but the write cost the launch call 1.2-1.6 us a mark, more
// than it saved: back to back 6.12-6.56 -> 6.03-6.52 us, a chain of 8 6.78 -> 6.85-7.39 us
// a kernel; session 21, reverted.) Private to the runtime.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "tessera/backend/cuda/event.hpp"

#include "phase_clock.hpp"

namespace tessera::runtime {

namespace cuda = backend::cuda;

class StreamTimeline {
 public:
  // A mark every this many launches: what a wait for a recent launch waits past it at most, and
  // how many launches share one event record.
  static constexpr uint64_t kMarkEvery = 4;
  // Launches that get a mark each once two waits within kOvershootWindow launches had to wait for
  // launches queued after theirs (wait()).
  static constexpr uint64_t kDenseLaunches = 256;
  static constexpr uint64_t kOvershootWindow = 16;

  StreamTimeline(const cuda::DeviceContext& ctx, CUstream stream);
  StreamTimeline(const StreamTimeline&) = delete;
  StreamTimeline& operator=(const StreamTimeline&) = delete;

  CUstream stream() const { return stream_; }
  const cuda::DeviceContext& context() const { return *ctx_; }

  // Calls `queue_work()`, which queues one launch on stream(), and returns the launch's number.
  // Under the timeline's lock, so that numbers follow the stream's order when threads share it.
  // If queue_work throws, nothing is numbered.
  template <class F>
  uint64_t queue(F&& queue_work) {
    std::lock_guard lock(mu_);
    PhaseClock clock;
    queue_work();
    clock.mark(&LaunchProfile::driver_launch_ns);
    const uint64_t seq = ++queued_;
    if (seq - last_mark_ >= (seq <= dense_until_ ? 1 : kMarkEvery)) {
      try {
        record_mark();
      } catch (...) {  // the next need records one (and reports the driver's failure)
      }
      clock.mark(&LaunchProfile::marks_ns);
    }
    return seq;
  }

  // Whether launch `seq` has finished, asking the driver at most once or twice. A launch no mark
  // covers is reported unfinished while the stream has not passed the newest mark (no event is
  // recorded for a question that the answer "not yet" serves). Throws BackendError if the work
  // failed.
  bool done(uint64_t seq);
  // Whether launch `seq` is known to have finished: asks nothing.
  bool known_done(uint64_t seq) const { return done_.load(std::memory_order_acquire) >= seq; }
  // Blocks until launch `seq` has finished. Throws BackendError if the work failed.
  void wait(uint64_t seq);
  // Makes work queued next on `waiter` wait, on the device, for launch `seq`: nothing on this
  // stream itself or when the launch is known done; a failed launch is not waited for.
  void order_on(uint64_t seq, CUstream waiter);
  // Before the stream is destroyed: records a last mark behind everything queued (launches may
  // still be waited for afterwards, and no event can be recorded on a destroyed stream). Waits for
  // the stream instead if the driver refuses the record. Never throws.
  void close() noexcept;

 private:
  struct Mark {
    uint64_t seq;
    std::shared_ptr<cuda::Event> event;
  };
  // Under mu_: records a mark after everything queued so far.
  void record_mark();
  // Under mu_: the oldest mark at or after `seq`, recording one if there is none.
  const Mark& covering(uint64_t seq);
  // Under mu_: every launch up to `seq` has finished; drops the marks it passed.
  void passed(uint64_t seq);
  // A mark's event, once seen complete: records that the stream passed it.
  void saw_complete(uint64_t seq);

  const cuda::DeviceContext* ctx_;
  const CUstream stream_;
  mutable std::mutex mu_;
  uint64_t queued_ = 0;          // the last launch's number
  uint64_t last_mark_ = 0;       // the number the newest mark covers up to
  uint64_t dense_until_ = 0;     // launches numbered up to this get a mark each
  uint64_t last_overshoot_ = 0;  // the mark of the last wait that waited past its launch
  std::atomic<uint64_t> done_{0};
  // close() was called: the stream is gone, and a stream with its handle is another one.
  std::atomic<bool> closed_{false};
  // Marks not yet known passed, oldest first: a ring of capacity ring_.size() (a power of two).
  std::vector<Mark> ring_;
  size_t head_ = 0, count_ = 0;
  // Events whose marks were passed and that nobody else holds: recorded again for new marks.
  std::vector<std::shared_ptr<cuda::Event>> spare_;
};

// The timeline of `stream` on the device of `ctx` (made on first use). Cheap: a thread asks the
// registry only when it launches on another stream than its last launch.
const std::shared_ptr<StreamTimeline>& stream_timeline(const cuda::DeviceContext& ctx,
                                                       CUstream stream);
// The stream is about to be destroyed: closes its timeline (the launches keep it), and a later
// stream with the same handle gets a new one.
void forget_stream_timeline(CUstream stream) noexcept;

// Events recorded for marks so far, by every timeline of the process: for tests, which check that
// launches do not record one each.
uint64_t gpu_marks_recorded() noexcept;

}  // namespace tessera::runtime

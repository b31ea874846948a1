#include "gpu_timeline.hpp"

#include <algorithm>
#include <unordered_map>

#include "tessera/backend/cuda/driver.hpp"

namespace tessera::runtime {

namespace {
// Spare events kept per stream: a mark is recorded every few launches and passed soon after.
constexpr size_t kSpareEvents = 8;
// Marks in flight from which a new mark first asks whether the oldest ones were passed.
constexpr size_t kMarksBeforeAsking = 4;
std::atomic<uint64_t> g_marks{0};
}  // namespace

uint64_t gpu_marks_recorded() noexcept {
  return g_marks.load(std::memory_order_relaxed);
}

StreamTimeline::StreamTimeline(const cuda::DeviceContext& ctx, CUstream stream)
    : ctx_(&ctx), stream_(stream), ring_(16) {
  spare_.reserve(kSpareEvents);
}

void StreamTimeline::record_mark() {
  // Nobody may wait on this stream for a long while (a loop of chained launches): pass the marks
  // the stream has passed, so that their events are recorded again rather than made anew.
  try {
    while (count_ >= kMarksBeforeAsking && ring_[head_].event->query()) passed(ring_[head_].seq);
  } catch (...) {  // the work failed: its waits report it
  }
  std::shared_ptr<cuda::Event> event;
  if (!spare_.empty()) {
    event = std::move(spare_.back());
    spare_.pop_back();
    event->record(stream_);
  } else {
    event = std::make_shared<cuda::Event>(*ctx_, stream_);
  }
  if (count_ == ring_.size()) {  // many marks in flight: grow the ring, oldest first
    std::vector<Mark> bigger(ring_.size() * 2);
    for (size_t i = 0; i < count_; ++i)
      bigger[i] = std::move(ring_[(head_ + i) & (ring_.size() - 1)]);
    ring_ = std::move(bigger);
    head_ = 0;
  }
  ring_[(head_ + count_) & (ring_.size() - 1)] = Mark{queued_, std::move(event)};
  ++count_;
  last_mark_ = queued_;
  g_marks.fetch_add(1, std::memory_order_relaxed);
}

const StreamTimeline::Mark& StreamTimeline::covering(uint64_t seq) {
  for (size_t i = 0; i < count_; ++i) {
    const Mark& m = ring_[(head_ + i) & (ring_.size() - 1)];
    if (m.seq >= seq) return m;
  }
  record_mark();
  return ring_[(head_ + count_ - 1) & (ring_.size() - 1)];
}

void StreamTimeline::passed(uint64_t seq) {
  if (done_.load(std::memory_order_relaxed) < seq) done_.store(seq, std::memory_order_release);
  while (count_ > 0) {
    Mark& m = ring_[head_];
    if (m.seq > seq) break;
    // Recorded again later only if nobody else holds it (a waiter copies it under mu_, so a
    // count of one cannot grow meanwhile).
    if (m.event.use_count() == 1 && spare_.size() < kSpareEvents)
      spare_.push_back(std::move(m.event));
    m.event.reset();
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
  }
}

void StreamTimeline::saw_complete(uint64_t seq) {
  std::lock_guard lock(mu_);
  passed(seq);
}

bool StreamTimeline::done(uint64_t seq) {
  if (known_done(seq)) return true;
  std::shared_ptr<cuda::Event> event;
  uint64_t mark = 0;
  {
    std::lock_guard lock(mu_);
    if (known_done(seq)) return true;
    if (last_mark_ < seq) {
      // No mark covers it. While the newest mark is unfinished, neither is this launch; once the
      // stream has passed it, a mark recorded now tells when this launch finishes.
      if (count_ > 0) {
        const Mark& newest = ring_[(head_ + count_ - 1) & (ring_.size() - 1)];
        if (!newest.event->query()) return false;
        passed(newest.seq);
      }
      record_mark();
    }
    const Mark& m = covering(seq);
    event = m.event;
    mark = m.seq;
  }
  if (!event->query()) return false;
  saw_complete(mark);
  return true;
}

void StreamTimeline::wait(uint64_t seq) {
  if (known_done(seq)) return;
  std::shared_ptr<cuda::Event> event;
  uint64_t mark = 0;
  bool whole_stream = false, overshoots = false;
  {
    std::lock_guard lock(mu_);
    if (known_done(seq)) return;
    // The newest launch, and no mark behind it: waiting for the stream costs one driver call
    // instead of two (a record and a wait), as a raw launch-and-synchronize does.
    whole_stream = seq == queued_ && last_mark_ < seq;
    const bool uncovered = last_mark_ < seq;
    if (whole_stream) {
      mark = queued_;
    } else {
      const Mark& m = covering(seq);
      event = m.event;
      mark = m.seq;
      overshoots = uncovered && mark > seq;
    }
  }
  // The mark recorded for this wait covers the launches queued after `seq` too: if they are still
  // running, the host waits for them and the stream drains (the GPU idle until the host launches
  // again). A ring that waits for the oldest of two or three launches in flight (time_launches, a
  // pipeline's buffers) does that at every few steps; so a second such wait within
  // kOvershootWindow launches of the first gives the next kDenseLaunches launches a mark each (an
  // event record in each launch call), after which the cadence is tried again.
  if (overshoots) {
    bool finished = true;
    try {
      finished = event->query();
    } catch (...) {  // the work failed: the synchronize below reports it
    }
    if (!finished) {
      std::lock_guard lock(mu_);
      if (last_overshoot_ != 0 && mark - last_overshoot_ <= kOvershootWindow)
        dense_until_ = queued_ + kDenseLaunches;
      last_overshoot_ = mark;
    }
  }
  // Outside the lock: other threads keep launching on the stream.
  if (whole_stream) {
    ctx_->make_current();
    TESSERA_CU_WHILE("waiting for GPU work", cuStreamSynchronize, stream_);
  } else {
    event->synchronize();
  }
  saw_complete(mark);
}

void StreamTimeline::order_on(uint64_t seq, CUstream waiter) {
  // In order already (unless the handle now names a new stream), or nothing to wait for.
  if ((waiter == stream_ && !closed_.load(std::memory_order_acquire)) || known_done(seq)) return;
  std::shared_ptr<cuda::Event> event;
  uint64_t mark = 0;
  {
    std::lock_guard lock(mu_);
    const Mark& m = covering(seq);
    event = m.event;
    mark = m.seq;
  }
  try {
    if (event->query()) return saw_complete(mark);
  } catch (...) {  // the work failed: nothing to wait for; its wait() reports the failure
    return;
  }
  if (waiter == stream_) {
    // This stream was destroyed and `waiter` is a new one with its handle: Event::make_wait takes
    // a wait on the handle the event was recorded on for one in order already, and would skip it.
    // Waited for on the host instead (only a reused handle gets here).
    try {
      event->synchronize();
    } catch (...) {  // the work failed: its wait() reports the failure
      return;
    }
    return saw_complete(mark);
  }
  event->make_wait(waiter);
}

void StreamTimeline::close() noexcept {
  std::lock_guard lock(mu_);
  closed_.store(true, std::memory_order_release);
  if (last_mark_ == queued_) return;  // every launch is covered already
  try {
    record_mark();
    return;
  } catch (...) {
  }
  // No mark: wait here, so that no question about these launches needs the stream again.
  try {
    ctx_->make_current();
    (void)cuda::driver().cuStreamSynchronize(stream_);
  } catch (...) {
  }
  last_mark_ = queued_;
  passed(queued_);
}

// ---- registry --------------------------------------------------------------------------------

namespace {

struct Registry {
  std::mutex mu;
  std::unordered_map<CUstream, std::shared_ptr<StreamTimeline>> timelines;
  // Bumped when a stream is forgotten: a thread's remembered timeline is then looked up again.
  std::atomic<uint64_t> generation{0};
};
Registry& registry() {
  static auto* r = new Registry;  // leaked: launches may be waited for during static destruction
  return *r;
}

struct LastTimeline {
  CUstream stream = nullptr;
  uint64_t generation = 0;
  std::shared_ptr<StreamTimeline> timeline;
};
thread_local LastTimeline t_last;

}  // namespace

const std::shared_ptr<StreamTimeline>& stream_timeline(const cuda::DeviceContext& ctx,
                                                       CUstream stream) {
  Registry& r = registry();
  const uint64_t generation = r.generation.load(std::memory_order_acquire);
  if (t_last.timeline && t_last.stream == stream && t_last.generation == generation &&
      &t_last.timeline->context() == &ctx)
    return t_last.timeline;
  std::shared_ptr<StreamTimeline> found;
  {
    std::lock_guard lock(r.mu);
    std::shared_ptr<StreamTimeline>& t = r.timelines[stream];
    if (!t || &t->context() != &ctx) t = std::make_shared<StreamTimeline>(ctx, stream);
    found = t;
  }
  t_last = {stream, generation, std::move(found)};
  return t_last.timeline;
}

void forget_stream_timeline(CUstream stream) noexcept {
  Registry& r = registry();
  std::shared_ptr<StreamTimeline> gone;  // released outside the lock
  std::lock_guard lock(r.mu);
  if (auto it = r.timelines.find(stream); it != r.timelines.end()) {
    gone = std::move(it->second);
    r.timelines.erase(it);
    gone->close();
  }
  r.generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace tessera::runtime

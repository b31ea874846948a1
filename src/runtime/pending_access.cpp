#include "pending_access.hpp"

#include <algorithm>
#include <mutex>

#include "cpu_queue.hpp"
#include "gpu_streams.hpp"
#include "graph_capture.hpp"

#include "tessera/runtime/future.hpp"

namespace tessera::runtime {

namespace {

// Nothing here asks a completion more than finished() (on a GPU, an event query): collecting a
// GPU launch's result reads its error report from the device, which would stall the launch path.

// Whether a writer must still be followed: it is not known to have succeeded. (A failed one's
// error is the follower's; one that finished but whose result nobody collected may have failed.)
bool still_matters(const Completion& c) {
  return !c.known_succeeded();
}

// The oldest readers are dropped once they are known to be done from this many on; readers that
// must be asked (a driver query each) from kReadersToPrune on, or twice what was left by the last
// prune.
constexpr size_t kReadersToPruneKnown = 4;
constexpr size_t kReadersToPrune = 8;

// Drops the readers that finished, so that a tensor read by every launch of a long loop does not
// collect them all. Called under the storage's lock.
void prune_readers(std::vector<std::shared_ptr<Completion>>& readers) {
  std::erase_if(readers, [](const std::shared_ptr<Completion>& r) { return r->finished(); });
}

}  // namespace

Predecessors PendingAccess::predecessors(const std::vector<StorageUse>& uses) {
  Predecessors p;
  predecessors(uses, p);
  return p;
}

void PendingAccess::predecessors(const std::vector<StorageUse>& uses, Predecessors& p) {
  for (const StorageUse& u : uses) {
    std::lock_guard lock(u.storage->pending_mu_);
    if (const std::shared_ptr<Completion>& w = u.storage->writer_; w && still_matters(*w))
      p.writers.push_back(w);
    // Readers are not asked (a GPU launch's question may cost an event): one on the new launch's
    // stream needs no order, and one on another stream is asked when it is ordered.
    if (u.write)
      for (const std::shared_ptr<Completion>& r : u.storage->readers_)
        if (!r->known_done()) p.readers.push_back(r);
  }
}

void PendingAccess::record(const std::vector<StorageUse>& uses,
                           const std::shared_ptr<Completion>& launch) {
  for (const StorageUse& u : uses) {
    std::lock_guard lock(u.storage->pending_mu_);
    if (u.write) {
      u.storage->writer_ = launch;
      u.storage->readers_.clear();
    } else {
      std::vector<std::shared_ptr<Completion>>& readers = u.storage->readers_;
      // The oldest readers known to be done are dropped without asking anyone (in a loop that
      // waits for each launch, that keeps the list short); the others are asked only when the
      // list has doubled since, so that each launch costs O(1) checks and queries on average.
      if (readers.size() >= kReadersToPruneKnown) {
        size_t done = 0;
        while (done < readers.size() && readers[done]->known_done()) ++done;
        readers.erase(readers.begin(), readers.begin() + static_cast<std::ptrdiff_t>(done));
      }
      if (readers.size() >= u.storage->prune_readers_at_) {
        prune_readers(readers);
        u.storage->prune_readers_at_ = std::max<size_t>(kReadersToPrune, 2 * readers.size());
      }
      readers.push_back(launch);
    }
  }
}

void PendingAccess::wait_for_writer(const Storage& s) {
  graph_check_host_access(s);
  std::shared_ptr<Completion> writer;
  {
    std::lock_guard lock(s.pending_mu_);
    writer = s.writer_;
  }
  if (writer) writer->wait();
}

void PendingAccess::wait_for_all(const Storage& s) {
  graph_check_host_access(s);
  std::shared_ptr<Completion> writer;
  std::vector<std::shared_ptr<Completion>> readers;
  {
    std::lock_guard lock(s.pending_mu_);
    writer = s.writer_;
    readers = s.readers_;
  }
  for (const std::shared_ptr<Completion>& r : readers) r->wait_quietly();
  if (writer) writer->wait();
  std::lock_guard lock(s.pending_mu_);
  prune_readers(s.readers_);
}

void PendingAccess::order_stream_after(const Storage& s, void* stream) {
  std::shared_ptr<Completion> writer;
  std::vector<std::shared_ptr<Completion>> readers;
  {
    std::lock_guard lock(s.pending_mu_);
    writer = s.writer_;
    readers = s.readers_;
  }
  for (const std::shared_ptr<Completion>& r : readers) r->order_on(stream);
  if (writer) writer->order_on(stream);
}

void PendingAccess::release(const Storage& s, std::function<void()> free_memory,
                            void* order_stream) noexcept {
  // The last handle is gone, so nothing records new uses; the completions are still shared with
  // the launches' workers, which is why they are moved out rather than read in place.
  std::shared_ptr<Completion> writer = std::move(s.writer_);
  std::vector<std::shared_ptr<Completion>> readers = std::move(s.readers_);
  prune_readers(readers);
  const bool pending = !readers.empty() || (writer && !writer->finished());
  if (writer) keep_lost_error_later(writer);
  if (!pending) {
    if (free_memory) free_memory();
    return;
  }
  if (!free_memory && order_stream && s.device().is_cuda()) {
    // Lent memory the lender reuses in `order_stream`'s order: that stream waits for the launches.
    try {
      for (const std::shared_ptr<Completion>& r : readers) r->order_on(order_stream);
      if (writer) writer->order_on(order_stream);
      return;
    } catch (...) {  // the driver refused the wait: wait on the host instead, below
    }
  }
  if (free_memory && s.device().is_cuda()) {
    // Freed on the device's own stream, after the launches still using the memory, waited for
    // there on the device (they may be on other streams).
    void* device_stream = gpu_device_stream(s.device());
    try {
      for (const std::shared_ptr<Completion>& r : readers) r->order_on(device_stream);
      if (writer) writer->order_on(device_stream);
      return free_memory();
    } catch (...) {  // the driver refused the wait: wait on the host instead, below
    }
  }
  if (free_memory) {
    try {
      cpu_enqueue([readers, writer, free_memory] {
        for (const std::shared_ptr<Completion>& r : readers) r->wait_quietly();
        if (writer) writer->wait_quietly();
        free_memory();
      });
      return;
    } catch (...) {  // no memory to queue the free: wait here instead
    }
  }
  for (const std::shared_ptr<Completion>& r : readers) r->wait_quietly();
  if (writer) writer->wait_quietly();
  if (free_memory) free_memory();
}

}  // namespace tessera::runtime

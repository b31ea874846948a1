// Per-storage tracking of the launches that may still be using a storage (Storage's writer_ and
// readers_), so that launches touching the same memory run in order without the host waiting:
// read after write, write after read, write after write. Private to the runtime: the launcher
// asks for a launch's predecessors before it starts and records the launch once it has started;
// host reads and writes, and a storage's end, wait here.
//
// Why no lock is held between predecessors() and record(): a launch that writes a storage holds
// its only handle (a partition, or a sole SIMT output) while it starts, so no other launch can
// record a use of that storage meanwhile; launches that only read one storage may record in any
// order, since reads do not conflict.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "tessera/runtime/launch.hpp"
#include "tessera/runtime/tensor_handle.hpp"

namespace tessera::runtime {

// One storage a launch reads or writes.
struct StorageUse {
  const Storage* storage = nullptr;
  bool write = false;
};

// The launches a new launch must follow.
struct Predecessors {
  // Launches that write memory the new launch reads or writes: their failure is its failure.
  std::vector<std::shared_ptr<Completion>> writers;
  // Launches that read memory the new launch writes: it only has to run after them.
  std::vector<std::shared_ptr<Completion>> readers;
  bool empty() const { return writers.empty() && readers.empty(); }
};

class PendingAccess {
 public:
  // The unfinished launches that a launch using `uses` must follow: each storage's writer, and
  // the readers of each storage it writes. Finished launches that succeeded are left out.
  static Predecessors predecessors(const std::vector<StorageUse>& uses);
  // The same, appended to `out` (whose lists' memory the launch path reuses).
  static void predecessors(const std::vector<StorageUse>& uses, Predecessors& out);
  // Records `launch` as the writer of the storages it writes (replacing their writer and
  // readers, which it follows) and as a reader of those it reads.
  static void record(const std::vector<StorageUse>& uses,
                     const std::shared_ptr<Completion>& launch);
  // Before the host reads the storage: waits for its writer; throws that launch's error if it
  // failed.
  static void wait_for_writer(const Storage& s);
  // Before the host writes the storage, or hands out its address: waits for its writer and its
  // readers; throws the writer's error if it failed.
  static void wait_for_all(const Storage& s);
  // When the storage ends, with `free_memory` the way to free its memory (null for caller memory,
  // which must not be touched once this returns). Without a pending launch, frees at once. Else
  // caller memory waits for them; the runtime's own memory is freed behind them without the host
  // waiting (on the CPU by a job queued after them, on a GPU by the device's stream order), so
  // dropping a chain's intermediate results does not stall the chain. The writer's error, if
  // nobody saw it, is kept on this thread (future.hpp's lost errors). Never throws.
  // `order_stream` (lent memory only, free_memory null): the lender reuses the memory in that GPU
  // stream's order, so instead of the host waiting, the stream waits on the device for them.
  static void release(const Storage& s, std::function<void()> free_memory,
                      void* order_stream = nullptr) noexcept;
  // Makes GPU stream `stream` wait, on the device, for the storage's pending writer and readers
  // (work queued on it next may then read or write the memory).
  static void order_stream_after(const Storage& s, void* stream);
};

}  // namespace tessera::runtime

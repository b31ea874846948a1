// The non-template core of a launch: checks the arguments against the kernel and against each
// other, finds (or traces and compiles) the kernel's specialization, derives the grid from the
// partitions, and runs it. Kernel<F> (kernel.hpp) is a thin template over this.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessera/backend/launch_args.hpp"
#include "tessera/core/narrowing.hpp"
#include "tessera/ir/ir.hpp"
#include "tessera/runtime/device.hpp"
#include "tessera/runtime/tensor_handle.hpp"

namespace tessera::runtime {

struct CompiledKernel;  // compile.hpp
class GpuKernel;        // gpu.hpp
struct CaptureArgs;     // src/runtime/graph_capture.hpp

// A kernel as the launcher sees it.
struct KernelSite {
  const void* identity;  // one per kernel object: part of the specialization key
  const char* name;
  const char* param_text;  // the parameter list as written, for parameter names
  SourceLoc loc;           // where the kernel is defined
};

// One argument as declared by the kernel and as passed by the caller.
struct LaunchArg {
  ir::ParamKind kind;
  DType dtype;
  int declared_rank = kDynamicRank;      // Out<T, R> / In<T, R>
  const TensorHandle* tensor = nullptr;  // Out and In
  // Out: the partition's tile shape; Accum: the grid it declares. The caller's (alive while
  // check_launch reads it).
  std::span<const int64_t> tile;
  PartitionMark partitioned;  // Out, Accum: HandleAccess::mark() of the argument
  double scalar = 0;          // Scalar of a floating-point dtype
  int64_t iscalar = 0;        // Scalar of an integer or bool dtype
};

// Work that finishes on a device by itself, such as a GPU launch (its event); a Completion asks
// it. Implemented by the GPU runtime (src/runtime/gpu_launch.cpp).
class DeviceWork {
 public:
  virtual ~DeviceWork() = default;
  // True once the work has finished; throws the work's error (BackendError) if it failed.
  virtual bool done() = 0;
  // Blocks until the work has finished; throws the work's error if it failed.
  virtual void wait() = 0;
  // Makes work queued next on `stream` (a CUstream, as void*) wait for this work, on the device.
  // Work that is not on a GPU stream has nothing to order.
  virtual void order_on(void* stream) { (void)stream; }
};

// Completion of a launch; shared by the futures that own the launch's arguments and by the
// storages the launch uses (tensor_handle.hpp). Either finished by finish() (a CPU-backend launch,
// run by a worker thread), or made with the DeviceWork it waits for (a GPU launch returns at once,
// and an error of the kernel surfaces at wait()). `label` names the launch in an error nobody
// asked for (future.hpp): "kernel 'add' (defined at add.cpp:12)".
//
// A launch ordered after others (it reads or overwrites what they write: follow()) fails if one of
// them failed: its inputs, or the outputs it would partly overwrite, hold nothing valid. Its
// error is then a LaunchError that names both launches and quotes the first one's error.
class Completion {
 public:
  Completion() = default;
  // The label is shared: a kernel's launches share one, made with its specialization, so that
  // labelling costs a launch no formatting.
  explicit Completion(std::shared_ptr<const std::string> label) : label_(std::move(label)) {}
  explicit Completion(std::string label)
      : Completion(std::make_shared<const std::string>(std::move(label))) {}
  explicit Completion(std::unique_ptr<DeviceWork> work,
                      std::shared_ptr<const std::string> label = nullptr)
      : work_(std::move(work)), label_(std::move(label)) {}
  Completion(std::unique_ptr<DeviceWork> work, std::string label)
      : Completion(std::move(work), std::make_shared<const std::string>(std::move(label))) {}
  // Marks the work done, with its error if any; the first call wins.
  void finish(std::exception_ptr error = nullptr) { mark_done(std::move(error)); }
  // Makes the launches in `writers` (which write memory this launch reads or writes) this
  // launch's predecessors: their failure becomes its failure. Called once, before the work can
  // finish. Copied: one or two writers (the usual chain) are held without a heap allocation.
  void follow(std::span<const std::shared_ptr<Completion>> writers);
  // Waits for the predecessors; the LaunchError this launch fails with if one of them failed
  // (counting that one's error as seen), else null. Never throws.
  std::exception_ptr predecessor_error() const noexcept;
  bool ready() const;
  // Blocks until the work is done; rethrows its error (every time it is asked).
  void wait() const;
  // Blocks until the work is done, without throwing its error or counting it as seen: for a
  // launch that must only run after this one. Never throws.
  void wait_quietly() const noexcept;
  // Whether the work is known to be done and to have failed (asks nothing, waits for nothing).
  bool known_failed() const;
  // Makes work queued next on GPU stream `stream` wait, on the device, for this work, unless it
  // has finished or runs on that stream already (runtime/stream.hpp).
  void order_on(void* stream) const;
  // Whether the work is known to be done without an error (asks nothing, waits for nothing).
  bool known_succeeded() const;
  // Whether the work is known to be done, with or without an error (asks nothing).
  bool known_done() const;
  // Whether the work has finished, asked without collecting its result: a GPU launch's event is
  // queried, but its error report is not read (that costs a copy from the device). For the
  // launch path, which asks this of earlier launches on every launch. Never throws.
  bool finished() const noexcept;
  // Blocks until the work is done and returns its error if no wait() has thrown it to anyone
  // yet, marking it seen; else null. Never throws: a Future's destructor calls it.
  std::exception_ptr unseen_error() const noexcept;
  // "" when the launch has none.
  const std::string& label() const;

 private:
  void mark_done(std::exception_ptr error) const;
  // Asks the device work, blocking or not, and marks the completion done if it is.
  void settle(bool block) const;

  enum State : uint8_t { kPending, kSucceeded, kFailed };
  // The published outcome (release after done_, error_ and the predecessors' release): read
  // without the lock. kPending may still be seen briefly after done_ is set; every reader then
  // takes the slow path, which reads done_ under the lock.
  State state() const { return state_.load(std::memory_order_acquire); }

  std::unique_ptr<DeviceWork> work_;  // null for work finished by finish()
  std::shared_ptr<const std::string> label_;
  mutable std::atomic<State> state_{kPending};
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable bool done_ = false;
  // Set with done_: from then on settle() asks the work nothing (a waiter that comes back before
  // state_ is published takes the lock and finds done_), so each waiter asks the device at most
  // once however often it waits in that moment.
  mutable std::atomic<bool> ending_{false};
  mutable bool seen_ = false;  // a wait() has thrown the error to a caller
  mutable std::exception_ptr error_;
  // The predecessors (follow()): the first kInlineWriters inline, the rest in more_writers_;
  // dropped once the work is done, so that a long chain of launches does not keep every earlier
  // launch alive.
  static constexpr size_t kInlineWriters = 2;
  mutable std::array<std::shared_ptr<Completion>, kInlineWriters> writers_;
  mutable std::vector<std::shared_ptr<Completion>> more_writers_;
  // Written under mu_; read without it to skip the lock when there are none (follow() runs before
  // the Completion reaches another thread, and mark_done() clears it).
  mutable std::atomic<size_t> writer_count_{0};
};

// Traces the kernel body; called with parameters already described (names, kinds, dtypes, ranks,
// tile shapes).
using TraceFn = std::function<ir::Function(std::vector<ir::Param>)>;

// A launch that passed every check: its specialization is traced and compiled, and its
// arguments are held as the backend takes them (addresses, shapes, scalar values). Nothing in it
// refers to the caller's handles, so the launcher takes the arguments from the caller only after
// check_launch() returned, and before start().
class CheckedLaunch {
 public:
  // Starts the work, ordered after the earlier launches that use the same storages (a read after
  // their write, a write after their reads and write), without waiting for them on the host: on
  // the CPU a worker thread runs it once they are done, on a GPU the device orders it. Throws
  // only what no check can know beforehand: the driver refusing the launch, or no memory for its
  // error report. The work's own errors (an unpadded load outside its tensor), and the failure of
  // a launch it follows, surface at the Completion's wait(), on every backend.
  // Called once: the launch's arguments move into the work.
  std::shared_ptr<Completion> start() &&;

 private:
  friend CheckedLaunch check_launch(const KernelSite&, std::span<const LaunchArg>, const TraceFn&,
                                    SourceLoc);
  CheckedLaunch() = default;
  std::shared_ptr<const std::string> label_;  // the specialization's
  Device device_ = Device::cpu();
  std::shared_ptr<const CompiledKernel> kernel_;
  std::shared_ptr<const GpuKernel> gpu_;  // on a GPU
  backend::LaunchArgs args_;
  // The storages the launch reads and writes, in parameter order: what orders it after earlier
  // launches (src/runtime/pending_access.hpp). The caller's arguments keep them alive until the
  // launch has started and its Future holds them.
  std::vector<std::pair<const Storage*, bool>> uses_;  // (storage, written)
  // Set while this thread captures a graph (runtime/graph.hpp): start() records the launch there.
  std::shared_ptr<const CaptureArgs> capture_;
};

// Validates the launch (arguments alive, ranks, devices, grids, overlaps, the device's limits),
// and traces, checks and compiles the kernel's specialization (once per key). Throws
// (LaunchError, OwnershipError, KernelError, BackendError) before any work starts, and reads the
// arguments only through `args`: the caller still holds them, and keeps them when this throws.
CheckedLaunch check_launch(const KernelSite& site, std::span<const LaunchArg> args,
                           const TraceFn& trace, SourceLoc call);

// Throws the LaunchError for a scalar argument (argument `index` of `count`) whose value `value`
// the parameter's type `to` would change (the rule and reason: core/narrowing.hpp).
[[noreturn]] void fail_scalar_narrowing(const KernelSite& site, size_t index, size_t count,
                                        const std::string& value, DType to, Narrowing why,
                                        SourceLoc call);

// The parameter names in a TESSERA_KERNEL parameter list ("Out<float> z, In<float> x" -> z, x).
std::vector<std::string> parameter_names(const char* param_text, size_t count);

}  // namespace tessera::runtime

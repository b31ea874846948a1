// The non-template core of a launch: checks the arguments against the kernel and against each
// other, finds (or traces and compiles) the kernel's specialization, derives the grid from the
// partitions, and runs it. Kernel<F> (kernel.hpp) is a thin template over this.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/ir/ir.hpp"
#include "tessera/runtime/tensor_handle.hpp"

namespace tessera::runtime {

// A kernel as the launcher sees it.
struct KernelSite {
  const void* identity;     // one per kernel object: part of the specialization key
  const char* name;
  const char* param_text;   // the parameter list as written, for parameter names
  SourceLoc loc;            // where the kernel is defined
};

// One argument as declared by the kernel and as passed by the caller.
struct LaunchArg {
  ir::ParamKind kind;
  DType dtype;
  int declared_rank = kDynamicRank;   // Out<T, R> / In<T, R>
  const TensorHandle* tensor = nullptr;  // Out and In
  Shape tile;                            // Out
  double scalar = 0;                     // Scalar of a floating-point dtype
  int64_t iscalar = 0;                   // Scalar of an integer or bool dtype
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
};

// Completion of a launch; shared by the futures that own the launch's arguments. Either finished
// by finish() (the CPU backend runs synchronously), or made with the DeviceWork it waits for (a
// GPU launch returns at once, and an error of the kernel surfaces at wait()).
class Completion {
 public:
  Completion() = default;
  explicit Completion(std::unique_ptr<DeviceWork> work) : work_(std::move(work)) {}
  // Marks the work done, with its error if any; the first call wins.
  void finish(std::exception_ptr error = nullptr) { mark_done(std::move(error)); }
  bool ready() const;
  // Blocks until the work is done; rethrows its error (every time it is asked).
  void wait() const;

 private:
  void mark_done(std::exception_ptr error) const;
  // Asks the device work, blocking or not, and marks the completion done if it is.
  void settle(bool block) const;

  std::unique_ptr<DeviceWork> work_;  // null for work finished by finish()
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable bool done_ = false;
  mutable std::exception_ptr error_;
};

// Traces the kernel body; called with parameters already described (names, kinds, dtypes, ranks,
// tile shapes).
using TraceFn = std::function<ir::Function(std::vector<ir::Param>)>;

// Validates, specializes and starts the launch. Throws (LaunchError, OwnershipError, KernelError)
// before any work starts if anything is wrong.
std::shared_ptr<Completion> launch(const KernelSite& site, const std::vector<LaunchArg>& args,
                                   const TraceFn& trace, SourceLoc call);

// The parameter names in a TESSERA_KERNEL parameter list ("Out<float> z, In<float> x" -> z, x).
std::vector<std::string> parameter_names(const char* param_text, size_t count);

}  // namespace tessera::runtime

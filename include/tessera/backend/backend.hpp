// A backend as the runtime calls it: the compile step after the IR passes and the start of each
// launch, for one kind of device. The runtime asks backend_for(device.kind()) instead of branching
// on is_cuda():
//
//   compile_specialization: trace ─▶ IR passes ─▶ backend_for(kind).compile ─▶ Loaded
//   check_launch:           ... ─▶ backend_for(kind).check_launch(Loaded, arguments)
//   CheckedLaunch::start:   ... ─▶ backend_for(kind).start(LaunchToStart) ─▶ Completion
//   runtime::compile:       ... ─▶ every registered backend's check_compiles (TESSERA_NVRTC_CHECK)
//
// The CPU backend (src/runtime/cpu_backend.cpp: its start queues on the runtime's CPU workers) is
// always there: the interpreter runs the IR, so its compile makes nothing. The CUDA backend
// (src/backend/cuda/backend/, target tessera_cuda_backend) lowers the IR with the code generator
// and loads it; it registers itself when linked, and Tessera::tessera links it explicitly
// (CMakeLists.txt: the linker is told to keep it). Tessera::simt does not, so a SIMT-only program
// links no code generator; the runtime library itself references none of it (test
// runtime_does_not_use_codegen).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/launch_args.hpp"
#include "tessera/core/error.hpp"
#include "tessera/ir/ir.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera::runtime {
class GpuKernel;   // gpu.hpp: a kernel loaded on a GPU
class Completion;  // launch.hpp: the end of a launch, as futures and later launches wait for it
}  // namespace tessera::runtime

namespace tessera::backend {

// One specialization of a kernel to compile for one device.
struct KernelToCompile {
  std::string_view name;  // the kernel's, for logs and dumps
  Device device;
  const ir::Function& fn;  // checked IR (runtime::compile)
  // What the generated code may assume about each argument (empty unless the backend
  // specializes_on_tensors()).
  std::span<const cuda::TensorSpec> tensors;
};

// What a backend made of a kernel for one device: what its launches run.
struct Loaded {
  std::shared_ptr<const runtime::GpuKernel> gpu;  // loaded on a GPU; null: the IR runs as it is
};

// A checked launch to start (CheckedLaunch::start): what it runs, its arguments, and the launches
// before it that touch the same memory. Moved into the backend: a launch copies nothing here.
struct LaunchToStart {
  std::shared_ptr<const std::string> label;  // the specialization's, for errors and profiles
  Device device;
  std::shared_ptr<const ir::Function> fn;  // the checked IR, kept alive until the launch ends
  std::shared_ptr<const runtime::GpuKernel> gpu;  // Loaded::gpu
  // Lent for the call, so that a repeated launch allocates nothing: the caller reuses these
  // lists' memory for its next launch, and a backend moves out what it keeps past start().
  LaunchArgs& args;
  // Launches that write memory this one uses (their failure is its failure), and launches that
  // read memory this one writes (it only runs after them).
  std::vector<std::shared_ptr<runtime::Completion>>& writers;
  std::vector<std::shared_ptr<runtime::Completion>>& readers;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;  // "cpu", "cuda"
  // True when compile() reads KernelToCompile::tensors: a launch then works them out for each
  // tensor argument, and they are part of its specialization's key.
  virtual bool specializes_on_tensors() const = 0;
  // Lowers, compiles and loads `k`, each stage timed (TESSERA_LOG=compile) and dumpable.
  virtual Loaded compile(const KernelToCompile& k) const = 0;
  // Throws LaunchError when a launch of `loaded` with `args` would not fit the device (threads,
  // shared memory, ranks, the grid's extent): asked while the caller still holds the arguments,
  // before anything is queued. Nothing by default (the CPU runs any grid).
  virtual void check_launch(const Loaded& loaded, const LaunchArgs& args) const {
    (void)loaded, (void)args;
  }
  // Queues the launch after its predecessors and returns its completion (which follows the
  // writers: their failure is its failure). Asked after check_launch accepted the arguments.
  virtual std::shared_ptr<runtime::Completion> start(LaunchToStart&& launch) const = 0;
  // Called with every kernel's checked IR, whatever device it runs on: compiles it for targets
  // that are not there (TESSERA_NVRTC_CHECK), without running it. Nothing by default.
  virtual void check_compiles(const ir::Function& fn) const { (void)fn; }
};

// The backend of devices of `kind`. The CPU's is always there; a kind with no backend linked
// throws UsageError at `where` (the user's launch, when known) naming the CMake target that
// brings it.
const Backend& backend_for(DeviceKind kind, SourceLoc where = {});
// Makes `b` the backend of `kind` (a later registration replaces it). `b` lives as long as the
// program. Thread-safe.
void register_backend(DeviceKind kind, const Backend& b);
// The backends there are, CPU first.
std::vector<const Backend*> registered_backends();

}  // namespace tessera::backend

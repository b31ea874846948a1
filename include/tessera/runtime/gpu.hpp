// The runtime's view of the GPU backend: whether a GPU is usable, its memory, and running a
// kernel on it. Implemented by src/runtime/gpu.cpp (devices, memory) and gpu_launch.cpp (compile,
// load, launch) on top of backend/cuda. On a machine without a driver, a GPU or NVRTC, every call
// says what is missing; nothing here crashes for want of CUDA.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/backend/cuda/tensor_map.hpp"
#include "tessera/backend/launch_args.hpp"
#include "tessera/ir/ir.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

class Completion;

// True when GPU cuda:0 (the default GPU) can run kernels: the CUDA driver loads, the GPU is sm_80
// or newer, and an NVRTC loads that is no newer than the driver and compiles for the GPU. Else
// false, with the reason and the remedy in *why. Decided once per process.
bool gpu_usable(std::string* why);
// Throws UsageError naming what is missing unless device `d` can run kernels (the CPU always can).
void require_gpu(Device d);

// Device memory from the device's stream-ordered pool. A free is queued behind the work already
// launched on the device, so memory is never reused while a kernel may still read it.
void* gpu_allocate(Device d, size_t bytes);
// Never throws (it runs from destructors); a failure is reported on stderr.
void gpu_free(Device d, void* p);
// Synchronous copies, ordered after the work already launched on the device.
void gpu_copy_to_device(Device d, void* dst, const void* host_src, size_t bytes);
void gpu_copy_to_host(Device d, void* host_dst, const void* src, size_t bytes);
void gpu_copy_on_device(Device d, void* dst, const void* src, size_t bytes);
// Sets `count` elements of `element_bytes` bytes at `dst` to the value at `element`, on the device
// (a memset where the element allows), ordered after the work already launched there.
void gpu_fill(Device d, void* dst, const void* element, size_t element_bytes, size_t count);
// Waits for all work launched on the device; throws BackendError if any of it failed.
void gpu_synchronize(Device d);

// The architecture that code for `d` is compiled for: the device's exact one (sm_90a on Hopper),
// or TESSERA_TARGET_ARCH=sm_80 (an older one, e.g. to run the Ampere lowering on a Hopper GPU:
// its PTX is then compiled by the driver at load). A newer architecture, or an "a" target of
// another architecture, is a UsageError.
backend::cuda::Arch gpu_arch(Device d);

// How a kernel parameter is passed (abi.hpp): Out and In as a TesseraTensorRef, a Scalar as its
// C type.
struct GpuParam {
  ir::ParamKind kind = ir::ParamKind::In;
  DType dtype = DType::F32;
};

// The GpuParams of a kernel's IR parameters.
std::vector<GpuParam> gpu_params(const std::vector<ir::Param>& params);

// A kernel as CUDA C++ source, ready to compile: what the code generator emits, plus how its
// parameters are passed.
struct GpuKernelSource {
  std::string name;    // the kernel's name: diagnostics, logs, dump files
  std::string entry;   // its extern "C" __global__ function
  std::string source;  // one complete, self-contained translation unit
  int threads_per_block = 128;
  int blocks_per_tile = 1;  // EmittedKernel::blocks_per_tile
  size_t dynamic_shared_bytes = 0;
  std::vector<GpuParam> params;  // one per kernel parameter, in order
  // For a run-time error the kernel reports (see LoadedKernel::error_flag): the user's line and
  // a description of each op, in ir::walk pre-order, so the error names the op that failed.
  std::vector<std::pair<SourceLoc, std::string>> op_sites;
  // Whether the kernel can write the module's error report (EmittedKernel::reports_errors; its
  // module then defines tessera_error and tessera_error_info). Reading the report back costs a
  // copy and a wait on the whole stream after each launch, so it is read only for such kernels.
  bool reports_errors = false;
  // EmittedKernel::tensor_maps and ::blocks_per_sm: TMA descriptors encoded at each launch, and a
  // grid of at most that many blocks per multiprocessor (0: one per tile).
  std::vector<backend::cuda::TensorMapSpec> tensor_maps;
  int blocks_per_sm = 0;
  // EmittedKernel::waits_for_prior_grids: the kernel executes griddepcontrol.wait before its
  // first global access, so on sm_90+ it is launched with programmatic stream serialization
  // (unless TESSERA_PDL=0, read when the kernel is loaded). Hand-written source (SIMT, tests)
  // leaves it false and is launched plainly.
  bool waits_for_prior_grids = false;
};

// A kernel compiled for one GPU and loaded on it.
class GpuKernel;

// Compiles (through the JIT cache: memory, then disk, then NVRTC) and loads `k` on `d`. The cache
// key covers the source, entry, architecture, NVRTC's version and Tessera's version. Writes
// TESSERA_DUMP=cuda,ptx files (see dump_dir()). Thread-safe; the same source on the same device
// gives the same loaded kernel. Throws UsageError (no usable GPU), BackendError (NVRTC's log, or
// the driver's refusal), LaunchError (shared memory beyond the device).
std::shared_ptr<const GpuKernel> gpu_prepare(Device d, const GpuKernelSource& k);

// Throws LaunchError when a launch of `k` with `args` would not fit the device (threads per
// block, shared memory, tensor and grid ranks, tiles along an axis): what gpu_launch() checks,
// asked before the launcher takes the caller's arguments.
void gpu_check_launch(const GpuKernel& k, const backend::LaunchArgs& args);

// Launches a prepared kernel with `args` (abi.hpp's layout), asynchronously: the Completion
// (labelled `label`) is done when the GPU is, and its wait() throws the kernel's error: the error
// report of this launch only (a BoundsError at the user's line), or BackendError if the kernel
// faulted. Throws LaunchError before anything runs when the launch does not fit the device, and
// BackendError when the driver refuses it.
// `stream` (a CUstream, as void*; null for the device's own stream) is where it is queued, after
// the work queued on the device's own stream so far (allocations, fills, copies) and after the
// launches in `after` and `after_too` (those it must follow: runtime/stream.hpp), each waited for
// on the device. `checked`: gpu_check_launch() already passed on these arguments (the runtime's
// launch checks while the caller still holds them), so it is not asked again.
std::shared_ptr<Completion> gpu_launch(
    const GpuKernel& k, const backend::LaunchArgs& args,
    std::shared_ptr<const std::string> label = nullptr, void* stream = nullptr,
    const std::vector<std::shared_ptr<Completion>>& after = {},
    const std::vector<std::shared_ptr<Completion>>& after_too = {}, bool checked = false);

}  // namespace tessera::runtime

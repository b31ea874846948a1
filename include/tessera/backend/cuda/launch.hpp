// Launching a loaded kernel: the arguments are laid out as abi.hpp says (a TesseraGrid, then one
// TesseraTensorRef per tensor parameter and each scalar as its own C type), the launch is checked
// against the kernel's and the device's limits, and it is queued on the device's stream.
#pragma once

#include <memory>
#include <vector>

#include "tessera/backend/cuda/event.hpp"
#include "tessera/backend/cuda/module.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/backend/cuda/tensor_map.hpp"
#include "tessera/backend/launch_args.hpp"

namespace tessera::backend::cuda {

// How one kernel parameter is passed.
struct KernelParam {
  bool tensor = true;  // Out or In: a TesseraTensorRef; else a scalar of `dtype`
  DType dtype = DType::F32;
};

struct LaunchConfig {
  int threads_per_block = 128;
  size_t dynamic_shared_bytes = 0;
  int blocks_per_tile = 1;  // the kernel loops over grid.total * blocks_per_tile blocks
  // At most this many blocks per multiprocessor (the kernel walks the tiles itself); 0: no cap.
  int blocks_per_sm = 0;
  // Encoded from the arguments at each launch and passed after them (TMA operands).
  std::vector<TensorMapSpec> tensor_maps;
  // Launched with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION (programmatic dependent
  // launch): the kernel may start while the kernel before it on the stream finishes. Only for a
  // kernel that waits for it before touching global memory (EmittedKernel::waits_for_prior_grids):
  // programmatic_serialization() decides.
  bool programmatic_serialization = false;
};

// False under TESSERA_PDL=0, true when it is 1 or unset; throws UsageError (saying what to set)
// for any other value. Read on each call: the code generator asks once per kernel it emits, the
// loader once per kernel it loads.
bool programmatic_launch_enabled();
// False under TESSERA_AB_PREFETCH=0, true when it is 1 or unset; throws UsageError for any other
// value. The A/B switch of the prefetch op's L2 warm-up (KernelSpec::l2_prefetch), read
// by the code generator once per kernel it emits: the generated source differs, and the JIT cache
// keys on the source, so a kernel cached under one setting is never reused under the other.
bool l2_prefetch_enabled();
// False under TESSERA_AB_LOAD_ORDER=0, true when it is 1 or unset; throws UsageError for any other
// value. A temporary A/B switch for issue_loads_first (KernelSpec::issue_loads_first), read like
// l2_prefetch_enabled().
bool load_order_enabled();
// Whether launches of a kernel may carry programmatic stream serialization on a device of
// `device_arch` under a driver of `driver_version` (cuDriverGetVersion): the kernel waits for the
// grids before it (`kernel_waits`), the device has griddepcontrol (sm_90+), the driver captures
// such launches into graphs with their programmatic edges (CUDA 12.3+), and TESSERA_PDL is not 0.
// Reads TESSERA_PDL on each call (callers ask once per loaded kernel); throws UsageError when it
// is set to anything but 0 or 1.
bool programmatic_serialization(const Arch& device_arch, bool kernel_waits, int driver_version);
// The driver that keeps programmatic edges through stream capture (CUDA 12.3).
inline constexpr int kProgrammaticLaunchDriverVersion = 12030;

// Throws LaunchError (naming the kernel, the limit and the value asked for) when the launch does
// not fit the kernel's function or the device; launch() checks the same, first.
void check_launch(const LoadedKernel& kernel, const std::vector<KernelParam>& params,
                  const LaunchArgs& args, const LaunchConfig& config);

// Queues the kernel on `stream` (the device's own stream when null) and returns the event recorded
// after it there. The grid is
// 1-D: min(tile blocks, the device's grid limit) blocks, and the kernel loops over the rest.
// With `error_report` (device memory of kErrorReportBytes, for a kernel whose module has an
// error report), the module's report is copied there after the kernel and cleared, both queued
// on the stream before the event: the launch's own report, which no later launch can change.
// Throws LaunchError when the launch does not fit, BackendError when the driver refuses it.
std::unique_ptr<Event> launch(const LoadedKernel& kernel, const std::vector<KernelParam>& params,
                              const LaunchArgs& args, const LaunchConfig& config,
                              void* error_report = nullptr, CUstream stream = nullptr);
// The same without the event: what the runtime queues (it records events for several launches at
// once) and what a stream being captured into a CUDA graph records (the kernel, then the copy and
// clearing of its error report). If queuing the report fails after
// the kernel was queued, waits for the stream (a capturing stream refuses the wait, harmlessly)
// before throwing. `checked`: check_launch() already passed on these arguments (the runtime
// checks while the caller still holds them), so it is not run again.
void queue_launch(const LoadedKernel& kernel, const std::vector<KernelParam>& params,
                  const LaunchArgs& args, const LaunchConfig& config, void* error_report,
                  CUstream stream, bool checked = false);

// A launch's copy of its module's error report: the flag (an int, padded to 8 bytes), then
// tessera_error_info (5 x long long).
inline constexpr size_t kErrorReportBytes = 8 + 5 * sizeof(long long);

// Queues the copy of `kernel`'s module report into `report` (kErrorReportBytes of device memory)
// and the module report's clearing, on `stream`: one copy where the module holds the flag and the
// information as a report lays them out, two otherwise. queue_launch queues it behind a kernel;
// a graph's replay queues it behind its kernels (runtime/gpu_graph.cpp).
void queue_report_copy(const LoadedKernel& kernel, void* report, CUstream stream);

// Launches on the device a TesseraGrid of `grid` would give: exposed for tests.
int64_t grid_blocks(const Shape& grid, const DeviceProps& props, int blocks_per_tile = 1);

}  // namespace tessera::backend::cuda

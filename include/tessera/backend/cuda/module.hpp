// A compiled kernel loaded onto one GPU, with the limits the launch is checked against.
//
// Modules are never unloaded: a launch may still be running when the last handle goes away,
// kernels are few (one per specialization), and the driver frees everything at exit.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tessera/backend/cuda/context.hpp"

namespace tessera::backend::cuda {

struct LoadedKernel {
  const DeviceContext* ctx = nullptr;
  std::string name;   // for diagnostics: the kernel's name as the user wrote it
  std::string entry;  // the extern "C" function
  CUfunction function = nullptr;
  int max_threads_per_block = 0;  // this function's limit (registers can lower the device's)
  int static_shared_bytes = 0;
  int max_dynamic_shared_bytes = 0;  // what the launch may ask for (after opting in)
  // The module's run-time error report (codegen: an unpadded load outside its tensor, a loop
  // step that is not positive): `tessera_error` (int: 0, or 1 + the failing op's pre-order index)
  // and `tessera_error_info` (5 x long long). 0 when the kernel has no check that can fail.
  CUdeviceptr error_flag = 0;
  CUdeviceptr error_info = 0;
};

// Loads `cubin` on the device and finds `entry` in it, and with `error_report` the module's error
// report. When the kernel asks for more dynamic shared memory than the default limit, opts in up
// to `dynamic_shared_bytes` (cuFuncSetAttribute). Throws BackendError when the driver refuses the
// image or the entry, or the report is asked for and missing; LaunchError when the shared memory
// is more than the device has.
LoadedKernel load_kernel(const DeviceContext& ctx, const std::vector<char>& cubin,
                         const std::string& name, const std::string& entry,
                         size_t dynamic_shared_bytes, bool error_report = false);

}  // namespace tessera::backend::cuda

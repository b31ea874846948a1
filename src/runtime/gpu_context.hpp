// Shared by gpu.cpp and gpu_launch.cpp (private to the runtime).
#pragma once

#include "tessera/backend/cuda/context.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

// The backend context of GPU `d`, after checking (once per device) that it can run kernels;
// throws UsageError naming what is missing otherwise.
const backend::cuda::DeviceContext& gpu_context(Device d);

}  // namespace tessera::runtime

// The runtime's view of the GPU backend: whether one is usable, and the operations the runtime
// needs from it (memory, copies, running a compiled kernel). Implemented by src/runtime/gpu.cpp on
// top of backend/cuda; on a build or a machine without CUDA, every call says why not.
#pragma once

#include <cstddef>
#include <string>

#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

// True when a CUDA device of sm_80 or newer, its driver and NVRTC can be used; else false, with
// the reason in *why.
bool gpu_usable(std::string* why);
// Throws UsageError naming what is missing unless device `d` can run kernels.
void require_gpu(Device d);

void* gpu_allocate(Device d, size_t bytes);
void gpu_free(Device d, void* p);
// Copies between host memory and device memory (and device to device). Synchronous.
void gpu_copy_to_device(Device d, void* dst, const void* src, size_t bytes);
void gpu_copy_to_host(Device d, void* dst, const void* src, size_t bytes);

}  // namespace tessera::runtime

// Private to the CUDA backend's target (tessera_cuda_backend).
#pragma once

#include "tessera/backend/backend.hpp"

namespace tessera::backend::cuda {

// The CUDA backend (registered for DeviceKind::CUDA when linked).
const Backend& backend();

// TESSERA_NVRTC_CHECK=sm_80,sm_90a: generates CUDA C++ for each listed architecture and compiles
// it with NVRTC (not run), whatever device the kernel runs on (nvrtc_check.cpp).
void nvrtc_check(const ir::Function& f);

}  // namespace tessera::backend::cuda

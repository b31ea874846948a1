// What the doctor and the runtime ask about the NVRTC that was loaded, beyond nvrtc.hpp.
#pragma once

#include <string>
#include <vector>

#include "tessera/backend/cuda/nvrtc.hpp"

namespace tessera::backend::cuda {

// The file NVRTC was loaded from ("/usr/local/cuda/lib64/libnvrtc.so.13"); throws BackendError
// when NVRTC is absent.
std::string nvrtc_library();
// The real architectures this NVRTC compiles for, as 10 * major + minor (80, 86, 90, ...).
std::vector<int> nvrtc_supported_archs();
// True when this NVRTC compiles for `arch` (sm_90a counts as sm_90); else false with the reason
// and the remedy in *why.
bool nvrtc_supports(const Arch& arch, std::string* why);
// The options compile_cuda passes for `arch` besides the caller's (which replace the architecture
// and -std ones when they name them). Part of the JIT cache key, so a change of them recompiles.
std::vector<std::string> default_compile_options(const Arch& arch);

// The CUDA header folder handed to NVRTC with -I (one holding cuda_fp16.h), or "" when none was
// found; generated code is self-contained and needs none.
std::string cuda_include_dir();

}  // namespace tessera::backend::cuda

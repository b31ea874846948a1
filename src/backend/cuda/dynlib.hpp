// Opening shared libraries at run time (the CUDA driver, NVRTC). Private to backend/cuda.
#pragma once

#include <string>
#include <vector>

namespace tessera::backend::cuda::internal {

// Opens the first of `candidates` (sonames or paths) that loads, and keeps it loaded for the life
// of the process. Returns nullptr when none loads, with each candidate's dlerror() in *why.
void* open_first(const std::vector<std::string>& candidates, std::string* why);

// The address of `symbol` in `library`, or nullptr.
void* find_symbol(void* library, const char* symbol);

// The file a loaded library was opened from (through one of its symbols), or "" if unknown.
std::string library_file(void* symbol_in_library);

}  // namespace tessera::backend::cuda::internal

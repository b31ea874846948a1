// The text of abi.hpp, embedded in the library at build time, for CUDA C++ handed to NVRTC: the
// generated kernels and hand-written ones (the doctor's test kernel, tests) start with it, so they
// need no include path to Tessera's headers.
#pragma once

#include <string_view>

namespace tessera::backend::cuda {

std::string_view abi_source();

}  // namespace tessera::backend::cuda

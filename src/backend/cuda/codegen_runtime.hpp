// The device runtime's text: abi.hpp and device/*.cuh, in order, embedded into the library by
// codegen.cmake (which generates the definition at build time from the real files).
#pragma once

#include <string_view>

namespace tessera::backend::cuda::detail {

std::string_view device_runtime_source();

}  // namespace tessera::backend::cuda::detail

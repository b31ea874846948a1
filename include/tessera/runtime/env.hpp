// Comma-separated environment switches: TESSERA_DUMP=ir,cuda, TESSERA_LOG=jit,
// TESSERA_NVRTC_CHECK=sm_80,sm_90a.
#pragma once

#include <string_view>
#include <vector>

namespace tessera::runtime {

// The items of `var` (empty when unset), views into the environment.
std::vector<std::string_view> env_list(const char* var);
// True when `var` lists `item`, or "all".
bool env_list_has(const char* var, std::string_view item);

}  // namespace tessera::runtime

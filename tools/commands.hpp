// The subcommands of the `tessera` tool. Each returns the process's exit status.
#pragma once

#include <string>
#include <vector>

namespace tessera::tools {

// Checks what Tessera needs to run kernels, one ✓/✗ line per check. 0 when Tessera can run
// kernels (on the CPU backend if no GPU is there), 1 when something it needs is broken.
int doctor(const std::vector<std::string>& args);
// `cache dir`, `cache size`, `cache clear`: the on-disk JIT cache.
int cache(const std::vector<std::string>& args);

}  // namespace tessera::tools

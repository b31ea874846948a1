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
// `new NAME`: writes a new project into ./NAME (write_new_project) and prints how to build it.
int new_project(const std::vector<std::string>& args);

// Writes the project of scaffold_files(name, prefix) into the folder `name`, which must not exist
// (UsageError otherwise, and for a name that is not a project name). Leaves nothing behind when it
// fails part way.
void write_new_project(const std::string& name, const std::string& prefix);

}  // namespace tessera::tools

// NVRTC, loaded at run time: compiles CUDA C++ for one exact architecture.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera::backend::cuda {

// A compute capability, e.g. {9, 0, true} is sm_90a (arch-specific features such as wgmma).
struct Arch {
  int major = 8;
  int minor = 0;
  bool specific = false;    // the "a" suffix
  std::string str() const;  // "sm_90a"
  friend bool operator==(const Arch&, const Arch&) = default;
};

// "sm_80", "sm_90a" -> Arch; anything else is a UsageError that names `setting` (where the text
// came from, e.g. an environment variable).
Arch parse_arch(std::string_view text, std::string_view setting);

struct CompiledCuda {
  std::string ptx;
  std::vector<char> cubin;
  std::string log;  // NVRTC's messages, even on success
};

// True when NVRTC can be loaded; else false with the reason in *why.
bool nvrtc_available(std::string* why);
// NVRTC's version as major * 1000 + minor * 10 (13000 for 13.0); throws BackendError if absent.
int nvrtc_version();
// Compiles `source` (named `name` in diagnostics) for `arch`. Throws BackendError with NVRTC's log
// when NVRTC is missing or the source does not compile.
CompiledCuda compile_cuda(const std::string& source, const std::string& name, const Arch& arch,
                          const std::vector<std::string>& extra_options = {});

}  // namespace tessera::backend::cuda

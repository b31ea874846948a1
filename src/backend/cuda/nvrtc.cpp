// compile_cuda: CUDA C++ -> PTX and cubin for one exact architecture.
#include "tessera/backend/cuda/nvrtc.hpp"

#include <cctype>
#include <memory>
#include <string_view>

#include "nvrtc_api.hpp"
#include "tessera/backend/cuda/nvrtc_info.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

std::string Arch::str() const {
  return detail::cat("sm_", major, minor, specific ? "a" : "");
}

namespace {

bool has_option(const std::vector<std::string>& options,
                std::initializer_list<const char*> prefixes) {
  for (const std::string& o : options)
    for (const char* p : prefixes)
      if (o.starts_with(p)) return true;
  return false;
}

std::string program_log(const internal::NvrtcApi& api, nvrtcProgram prog) {
  size_t size = 0;
  if (api.nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

}  // namespace

std::vector<std::string> default_compile_options(const Arch& arch) {
  // A real architecture, so NVRTC runs ptxas and hands back a cubin for exactly this GPU (the PTX
  // it went through is kept too, for TESSERA_DUMP=ptx). Fast math is not on by default: results
  // must match the CPU backend's.
  std::vector<std::string> options{"--gpu-architecture=" + arch.str(), "-std=c++17",
                                   "-default-device"};
  // Generated code is self-contained; the toolkit's headers are offered for hand-written kernels
  // that include cuda_fp16.h and the like. NVRTC reads only what is #included.
  if (const std::string inc = cuda_include_dir(); !inc.empty()) options.push_back("-I" + inc);
  return options;
}

Arch parse_arch(std::string_view text, std::string_view setting) {
  Arch arch;
  const bool digits = text.size() >= 5 && text.starts_with("sm_") && std::isdigit(text[3]) &&
                      std::isdigit(text[4]) && (text.size() == 5 || text.substr(5) == "a");
  if (!digits)
    fail<UsageError>(setting, ": '", text, "' is not an architecture like sm_80 or sm_90a");
  arch.major = text[3] - '0';
  arch.minor = text[4] - '0';
  arch.specific = text.size() == 6;
  return arch;
}

CompiledCuda compile_cuda(const std::string& source, const std::string& name, const Arch& arch,
                          const std::vector<std::string>& extra_options) {
  const internal::NvrtcApi& api = internal::nvrtc();
  const std::string what = detail::cat("compiling ", name, " for ", arch.str());

  std::vector<std::string> options;
  for (std::string& o : default_compile_options(arch)) {
    const bool replaced = (o.starts_with("--gpu-architecture") &&
                           has_option(extra_options, {"--gpu-architecture", "-arch"})) ||
                          (o.starts_with("-std") && has_option(extra_options, {"-std", "--std"}));
    if (!replaced) options.push_back(std::move(o));
  }
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());

  nvrtcProgram prog = nullptr;
  internal::nvrtc_check(
      api.nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr),
      "nvrtcCreateProgram", what);
  auto destroy = [&api](nvrtcProgram* p) { api.nvrtcDestroyProgram(p); };
  std::unique_ptr<nvrtcProgram, decltype(destroy)> guard(&prog, destroy);

  const nvrtcResult compiled =
      api.nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  CompiledCuda out;
  out.log = program_log(api, prog);
  if (compiled != NVRTC_SUCCESS) {
    std::string flags;
    for (const std::string& o : options) flags += " " + o;
    fail<BackendError>("NVRTC could not compile ", name, " for ", arch.str(), " (",
                       api.nvrtcGetErrorString(compiled), ", options:", flags, "):\n",
                       out.log.empty() ? "(NVRTC gave no log)" : out.log);
  }

  size_t ptx_size = 0;
  internal::nvrtc_check(api.nvrtcGetPTXSize(prog, &ptx_size), "nvrtcGetPTXSize", what);
  out.ptx.resize(ptx_size);
  if (ptx_size > 0)
    internal::nvrtc_check(api.nvrtcGetPTX(prog, out.ptx.data()), "nvrtcGetPTX", what);
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();

  size_t cubin_size = 0;
  internal::nvrtc_check(api.nvrtcGetCUBINSize(prog, &cubin_size), "nvrtcGetCUBINSize", what);
  if (cubin_size == 0)
    fail<BackendError>("NVRTC compiled ", name, " for ", arch.str(),
                       " but produced no cubin; the architecture must be a real one (sm_XY), not "
                       "a virtual one (compute_XY)");
  out.cubin.resize(cubin_size);
  internal::nvrtc_check(api.nvrtcGetCUBIN(prog, out.cubin.data()), "nvrtcGetCUBIN", what);
  return out;
}

}  // namespace tessera::backend::cuda

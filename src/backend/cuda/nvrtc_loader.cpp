// Finding and loading NVRTC, and what the loaded one supports.
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "dynlib.hpp"
#include "nvrtc_api.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/backend/cuda/nvrtc_info.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

namespace internal {

namespace {

namespace fs = std::filesystem;

// Toolkit folders named by the environment, then the default one.
std::vector<std::string> toolkit_roots() {
  std::vector<std::string> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
  roots.emplace_back("/usr/local/cuda");
  return roots;
}

// Newest NVRTC first: 13 compiles for every architecture 12 does, and more.
constexpr const char* kSonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};

struct LoadedNvrtc {
  NvrtcApi api;
  bool ok = false;
  std::string error;
};

LoadedNvrtc load() {
  LoadedNvrtc n;
  std::vector<std::string> candidates(std::begin(kSonames), std::end(kSonames));
  for (const std::string& root : toolkit_roots())
    for (const char* lib : {"lib64", "lib"})
      for (const char* soname : kSonames) candidates.push_back(root + "/" + lib + "/" + soname);
  std::string why;
  void* lib = open_first(candidates, &why);
  if (!lib) {
    n.error =
        "NVRTC (libnvrtc.so.13 or libnvrtc.so.12) is not installed or not on the library "
        "path; install the CUDA toolkit's NVRTC (Debian/Ubuntu: cuda-nvrtc-13-0), or set "
        "CUDA_HOME to the toolkit folder (tried: " +
        why + ")";
    return n;
  }
  std::string missing;
#define TESSERA_NVRTC_RESOLVE(name)                                             \
  n.api.name = reinterpret_cast<decltype(n.api.name)>(find_symbol(lib, #name)); \
  if (!n.api.name) missing += (missing.empty() ? "" : ", ") + std::string(#name);
  TESSERA_NVRTC_API(TESSERA_NVRTC_RESOLVE)
#undef TESSERA_NVRTC_RESOLVE
  n.api.library = library_file(reinterpret_cast<void*>(n.api.nvrtcVersion));
  if (!missing.empty()) {
    n.error = "the NVRTC found (" + n.api.library + ") lacks " + missing +
              "; it is too old: install NVRTC 12.0 or newer";
    return n;
  }
  if (n.api.nvrtcVersion(&n.api.major, &n.api.minor) != NVRTC_SUCCESS || n.api.major < 12) {
    n.error =
        detail::cat("the NVRTC found (", n.api.library, ") is version ", n.api.major, ".",
                    n.api.minor, "; Tessera needs 12.0 or newer: install a newer CUDA toolkit");
    return n;
  }
  // NVRTC loads its builtins library by soname. When NVRTC itself came from a toolkit folder that
  // is not on the library path, load the builtins from beside it first, so that lookup finds them.
  if (!n.api.library.empty()) {
    const fs::path dir = fs::path(n.api.library).parent_path();
    const std::string builtins =
        detail::cat("libnvrtc-builtins.so.", n.api.major, ".", n.api.minor);
    if (fs::exists(dir / builtins)) open_first({(dir / builtins).string()}, nullptr);
  }
  n.ok = true;
  return n;
}

const LoadedNvrtc& loaded() {
  static const LoadedNvrtc n = load();  // thread-safe, attempted once
  return n;
}

}  // namespace

const NvrtcApi* nvrtc_api(std::string* why) {
  const LoadedNvrtc& n = loaded();
  if (n.ok) return &n.api;
  if (why) *why = n.error;
  return nullptr;
}

const NvrtcApi& nvrtc() {
  const LoadedNvrtc& n = loaded();
  if (!n.ok) fail<BackendError>(n.error);
  return n.api;
}

void nvrtc_check(nvrtcResult result, const char* call, const std::string& context) {
  if (result == NVRTC_SUCCESS) return;
  const char* text = nvrtc().nvrtcGetErrorString(result);
  fail<BackendError>("NVRTC call ", call, " failed", context.empty() ? "" : " while " + context,
                     ": ", text ? text : "error " + std::to_string(static_cast<int>(result)));
}

}  // namespace internal

bool nvrtc_available(std::string* why) {
  return internal::nvrtc_api(why) != nullptr;
}

int nvrtc_version() {
  const internal::NvrtcApi& api = internal::nvrtc();
  return api.major * 1000 + api.minor * 10;
}

std::string nvrtc_library() {
  return internal::nvrtc().library;
}

std::vector<int> nvrtc_supported_archs() {
  const internal::NvrtcApi& api = internal::nvrtc();
  int count = 0;
  internal::nvrtc_check(api.nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<size_t>(count));
  if (count > 0)
    internal::nvrtc_check(api.nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

bool nvrtc_supports(const Arch& arch, std::string* why) {
  std::string reason;
  if (!nvrtc_available(&reason)) {
    if (why) *why = reason;
    return false;
  }
  const int wanted = arch.major * 10 + arch.minor;
  for (int a : nvrtc_supported_archs())
    if (a == wanted) return true;
  if (why)
    *why = detail::cat("NVRTC ", nvrtc_version() / 1000, ".", nvrtc_version() % 1000 / 10, " (",
                       nvrtc_library(), ") cannot compile for ", arch.str(),
                       "; install a CUDA toolkit whose NVRTC supports it");
  return false;
}

std::string cuda_include_dir() {
  static const std::string dir = [] {
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
    // The headers of NVRTC's own toolkit first, so that their version matches.
    std::string ignored;
    if (const internal::NvrtcApi* api = internal::nvrtc_api(&ignored); api && !api->library.empty())
      candidates.push_back(fs::path(api->library).parent_path().parent_path() / "include");
    for (const std::string& root : internal::toolkit_roots())
      candidates.emplace_back(root + "/include");
    std::error_code ec;
    for (const fs::path& c : candidates)
      if (fs::exists(c / "cuda_fp16.h", ec)) return c.lexically_normal().string();
    return std::string();
  }();
  return dir;
}

}  // namespace tessera::backend::cuda

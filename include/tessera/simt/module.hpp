// Where SIMT kernels' machine code comes from, loaded onto one GPU.
//
//  - Module::embedded(): the kernels compiled ahead of time by nvcc, through the CMake helper
//    tessera_add_simt_kernels (cmake/TesseraSimt.cmake), which links their images (sm_80 and
//    sm_90a code) into the program.
//  - Module::nvrtc<K...>(source, name): CUDA C++ compiled at run time by NVRTC for the GPU's
//    exact architecture. The source holds TESSERA_SIMT_DEFINE bodies only: the SIMT device API
//    and the declarations of K... are put in front of it, spelled from the host's own types, so a
//    body whose parameters differ from the host's declaration does not compile.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/device.hpp"
#include "tessera/simt/detail/driver_bridge.hpp"
#include "tessera/simt/spelling.hpp"

namespace tessera::simt {

namespace detail {

class ModuleState;

// One image linked in by tessera_add_simt_kernels. The generated registration code calls
// register_embedded_image before main().
struct EmbeddedImage {
  const char* name;  // the .cu file it was compiled from
  const unsigned char* data;
  size_t size;
};
bool register_embedded_image(const char* name, const unsigned char* data, size_t size);

// A function of a module, ready to launch.
struct FunctionInfo {
  void* function = nullptr;
  FunctionLimits limits;
  std::string image;                                    // the image it was found in, for messages
  bool ahead_of_time = false;                           // from an embedded (nvcc) image
  std::optional<std::vector<unsigned char>> signature;  // its tessera_simt_signature_<kernel>
};

// The names in a parameter list as written ("Index1D i, DisjointSpan<float> out" -> i, out).
std::vector<std::string> param_names(std::string_view params);

// Checks the signature record an image carries for `kernel` against the host's (`host`, from the
// declaration the host was compiled with; `params`: the parameter list as written, for names).
// Throws UsageError naming the kernel, the image and the first parameter that differs, when they
// differ, or when an image built ahead of time carries none (built by an older Tessera).
void check_signature(std::string_view kernel, std::string_view params, const SignatureRecord& host,
                     const FunctionInfo& found);

// The SIMT device API (config, index, span, signature and kernel headers) as one text, for NVRTC.
std::string_view device_api_source();

// The translation unit NVRTC compiles: the device API, the declarations, then the user's source
// with its #include lines of tessera/simt headers blanked (so a source shared with nvcc works).
std::string nvrtc_translation_unit(std::string_view declarations, std::string_view source,
                                   std::string_view name);

}  // namespace detail

// The translation unit Module::nvrtc<K...>(source, name) hands to NVRTC: the device API, the
// declarations of K... spelled from the host's types, then `source` (for inspection, or to compile
// it with NVRTC for another architecture, as the nvrtc tests do).
template <class... Ks>
std::string nvrtc_translation_unit(std::string_view source, std::string_view name) {
  static_assert(sizeof...(Ks) > 0,
                "Module::nvrtc<K...>(): name the kernels the source defines, so that their "
                "declarations (from the host's types) come before it");
  std::string declarations;
  ((declarations += detail::nvrtc_declaration<Ks>()), ...);
  return detail::nvrtc_translation_unit(declarations, source, name);
}

class Module {
 public:
  // The images linked into this program, on `device`: one module per device for the process,
  // loaded on first use. Throws UsageError when the device cannot run SIMT kernels (no GPU, no
  // driver, a CPU device).
  static Module embedded(Device device = Device::cuda(0));

  // `source` compiled by NVRTC for `device` (named `name` in messages), with K... declared first.
  // The cubin comes through the JIT cache (compiled once per source, GPU architecture and NVRTC);
  // the module it is loaded into stays loaded for the process, so make one per source and keep
  // it. Throws BackendError with NVRTC's log when it does not compile.
  template <class... Ks>
  static Module nvrtc(std::string_view source, std::string_view name,
                      Device device = Device::cuda(0)) {
    return from_source(nvrtc_translation_unit<Ks...>(source, name), name, device);
  }

  Device device() const;
  int ordinal() const;
  const DeviceLimits& device_limits() const;
  // tessera_simt_<kernel> in this module. Throws UsageError naming the kernel and where it was
  // looked for when no image defines it.
  const detail::FunctionInfo& function(std::string_view kernel) const;

 private:
  explicit Module(std::shared_ptr<detail::ModuleState> s) : state_(std::move(s)) {}
  static Module from_source(const std::string& unit, std::string_view name, Device device);
  std::shared_ptr<detail::ModuleState> state_;
};

}  // namespace tessera::simt

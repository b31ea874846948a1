#include "tessera/backend/cuda/driver.hpp"

#include <initializer_list>
#include <vector>

#include "dynlib.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

namespace {

constexpr const char* kInstallDriver =
    "install the NVIDIA driver for the GPU (R580 or newer for CUDA 13)";

struct LoadedDriver {
  DriverApi api;
  bool ok = false;
  std::string error;  // why not, when !ok
};

LoadedDriver load() {
  LoadedDriver d;
  std::string why;
  void* lib = internal::open_first({"libcuda.so.1"}, &why);
  if (!lib) {
    d.error = "the CUDA driver library libcuda.so.1 is not installed or not on the library path (" +
              why + "); " + kInstallDriver;
    return d;
  }

  // cuInit, cuGetErrorName and cuGetProcAddress_v2 come from the library itself: the first
  // initialises the driver (which cuGetProcAddress may need), the second names its failure, the
  // third finds everything else.
  auto init = reinterpret_cast<decltype(&::cuInit)>(internal::find_symbol(lib, "cuInit"));
  auto error_name =
      reinterpret_cast<decltype(&::cuGetErrorName)>(internal::find_symbol(lib, "cuGetErrorName"));
  using GetProcAddress = decltype(&::cuGetProcAddress);  // cuGetProcAddress_v2, CUDA 12.0+
  auto get_proc =
      reinterpret_cast<GetProcAddress>(internal::find_symbol(lib, "cuGetProcAddress_v2"));
  if (!init || !error_name || !get_proc) {
    int version = 0;
    using GetVersion = decltype(&::cuDriverGetVersion);
    if (auto v = reinterpret_cast<GetVersion>(internal::find_symbol(lib, "cuDriverGetVersion")))
      v(&version);
    d.error = detail::cat("the CUDA driver is too old (CUDA ", version_string(version),
                          "); Tessera needs CUDA ", version_string(kMinDriverVersion),
                          " or newer: update the NVIDIA driver");
    return d;
  }

  const CUresult initialised = init(0);
  if (initialised != CUDA_SUCCESS) {
    const char* name = nullptr;
    if (error_name(initialised, &name) != CUDA_SUCCESS) name = nullptr;
    if (initialised == CUDA_ERROR_NO_DEVICE)
      d.error =
          "the CUDA driver is installed but reports no GPU (cuInit: CUDA_ERROR_NO_DEVICE); "
          "check that the GPU is visible (nvidia-smi, CUDA_VISIBLE_DEVICES)";
    else if (initialised == CUDA_ERROR_STUB_LIBRARY)
      d.error = detail::cat("the libcuda.so.1 found (",
                            internal::library_file(reinterpret_cast<void*>(init)),
                            ") is the CUDA toolkit's link stub, not a driver; ", kInstallDriver,
                            ", and take the stubs folder off the library path");
    else
      d.error =
          detail::cat("the CUDA driver failed to initialise (cuInit: ",
                      name ? name : "error " + std::to_string(initialised), "); ", kInstallDriver);
    return d;
  }

  // Every entry point is asked for at the version of the header that typed it.
  std::vector<std::string> missing;
  auto resolve = [&](const char* name, void** slot) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS || *slot == nullptr) {
      *slot = nullptr;
      missing.emplace_back(name);
    }
  };
#define TESSERA_CUDA_DRIVER_RESOLVE(name) resolve(#name, reinterpret_cast<void**>(&d.api.name));
  TESSERA_CUDA_DRIVER_API(TESSERA_CUDA_DRIVER_RESOLVE)
#undef TESSERA_CUDA_DRIVER_RESOLVE
  const auto resolve_optional = [&](const char* name, void** slot) {
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (get_proc(name, slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
        status != CU_GET_PROC_ADDRESS_SUCCESS)
      *slot = nullptr;
  };
#define TESSERA_CUDA_DRIVER_RESOLVE(name) \
  resolve_optional(#name, reinterpret_cast<void**>(&d.api.name));
  TESSERA_CUDA_DRIVER_API_OPTIONAL(TESSERA_CUDA_DRIVER_RESOLVE)
#undef TESSERA_CUDA_DRIVER_RESOLVE

  if (d.api.cuDriverGetVersion) d.api.cuDriverGetVersion(&d.api.version);
  if (d.api.version < kMinDriverVersion || !missing.empty()) {
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
    d.error =
        detail::cat("the CUDA driver (CUDA ", version_string(d.api.version), ") ",
                    missing.empty() ? "is too old" : "lacks " + names, "; Tessera needs CUDA ",
                    version_string(kMinDriverVersion), " or newer: update the NVIDIA driver");
    return d;
  }
  d.ok = true;
  return d;
}

const LoadedDriver& loaded() {
  static const LoadedDriver d = load();  // thread-safe, attempted once
  return d;
}

// What to do about the errors that have a remedy. (An if-chain: a switch over CUresult would have
// to name every enumerator under -Wswitch-enum.)
std::string_view remedy(CUresult r) {
  auto any_of = [r](std::initializer_list<CUresult> list) {
    for (CUresult c : list)
      if (r == c) return true;
    return false;
  };
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return "; the GPU is out of memory: drop tensors that are no longer needed, or work on "
           "smaller ones";
  if (any_of({CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_MISALIGNED_ADDRESS,
              CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_INVALID_ADDRESS_SPACE,
              CUDA_ERROR_INVALID_PC, CUDA_ERROR_HARDWARE_STACK_ERROR, CUDA_ERROR_LAUNCH_FAILED,
              CUDA_ERROR_ASSERT}))
    return "; a kernel faulted, which leaves this process's GPU context unusable: restart the "
           "process, and run it under compute-sanitizer to find the faulting access";
  if (any_of({CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
              CUDA_ERROR_INVALID_IMAGE}))
    return "; the code was compiled for another GPU, or by an NVRTC newer than the driver: "
           "update the NVIDIA driver, and clear the kernel cache with `tessera cache clear`";
  return {};
}

}  // namespace

bool driver_available(std::string* why) {
  const LoadedDriver& d = loaded();
  if (!d.ok && why) *why = d.error;
  return d.ok;
}

const DriverApi& driver() {
  const LoadedDriver& d = loaded();
  if (!d.ok) fail<BackendError>(d.error);
  return d.api;
}

std::string version_string(int v) {
  return detail::cat(v / 1000, ".", (v % 1000) / 10);
}

std::string describe(CUresult result) {
  const LoadedDriver& d = loaded();
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.api.cuGetErrorName && d.api.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (d.api.cuGetErrorString && d.api.cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = nullptr;
  std::string out = name ? name : "CUresult " + std::to_string(static_cast<int>(result));
  if (text) out += detail::cat(" (", text, ")");
  return out;
}

void check(CUresult result, std::string_view call, std::string_view context) {
  if (result == CUDA_SUCCESS) return;
  fail<BackendError>("CUDA driver call ", call, " failed",
                     context.empty() ? "" : detail::cat(" while ", context), ": ", describe(result),
                     remedy(result));
}

}  // namespace tessera::backend::cuda

// NVRTC, loaded at run time: the typed table of its entry points. Private to backend/cuda; the
// public interface is nvrtc.hpp and nvrtc_info.hpp.
#pragma once

#include <nvrtc.h>

#include <string>

namespace tessera::backend::cuda::internal {

#define TESSERA_NVRTC_API(X)   \
  X(nvrtcVersion)              \
  X(nvrtcGetErrorString)       \
  X(nvrtcGetNumSupportedArchs) \
  X(nvrtcGetSupportedArchs)    \
  X(nvrtcCreateProgram)        \
  X(nvrtcDestroyProgram)       \
  X(nvrtcCompileProgram)       \
  X(nvrtcGetProgramLogSize)    \
  X(nvrtcGetProgramLog)        \
  X(nvrtcGetPTXSize)           \
  X(nvrtcGetPTX)               \
  X(nvrtcGetCUBINSize)         \
  X(nvrtcGetCUBIN)

struct NvrtcApi {
#define TESSERA_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  TESSERA_NVRTC_API(TESSERA_NVRTC_MEMBER)
#undef TESSERA_NVRTC_MEMBER
  int major = 0, minor = 0;
  std::string library;  // the file it was loaded from
};

// Loads NVRTC once (thread-safe); nullptr with the reason in *why when it cannot be loaded.
const NvrtcApi* nvrtc_api(std::string* why);
// The loaded NVRTC; throws BackendError when it is absent.
const NvrtcApi& nvrtc();
// Throws BackendError naming the call and NVRTC's description of `result` unless it succeeded.
void nvrtc_check(nvrtcResult result, const char* call, const std::string& context = {});

}  // namespace tessera::backend::cuda::internal

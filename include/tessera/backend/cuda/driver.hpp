// The CUDA driver API, loaded at run time. The library never links libcuda: it opens
// libcuda.so.1 on first use (thread-safe, attempted once per process) and resolves every entry
// point through cuGetProcAddress into the typed table below. On a machine without a driver the
// table is never built, and each use says what is missing instead of crashing.
//
// cuda.h is included for its types only. It #defines many API names to versioned symbols
// (cuMemAlloc -> cuMemAlloc_v2, cuStreamDestroy -> cuStreamDestroy_v2, ...). The table's members
// go through the same macros, so `api.cuStreamDestroy(s)` names the member that holds the _v2
// entry point, whose type is the header's declaration; the name looked up with cuGetProcAddress
// is the unversioned one (the stringized macro argument), and the version asked for is the
// header's CUDA_VERSION, so the driver hands out exactly the variant these types describe.
#pragma once

#include <cuda.h>

#include <string>
#include <string_view>

namespace tessera::backend::cuda {

// X(name): every driver entry point Tessera calls. Add a row to call a new one.
#define TESSERA_CUDA_DRIVER_API(X) \
  X(cuInit)                        \
  X(cuDriverGetVersion)            \
  X(cuGetErrorName)                \
  X(cuGetErrorString)              \
  X(cuDeviceGetCount)              \
  X(cuDeviceGet)                   \
  X(cuDeviceGetName)               \
  X(cuDeviceGetAttribute)          \
  X(cuDeviceTotalMem)              \
  X(cuDevicePrimaryCtxRetain)      \
  X(cuCtxSetCurrent)               \
  X(cuCtxGetCurrent)               \
  X(cuStreamCreate)                \
  X(cuStreamSynchronize)           \
  X(cuStreamWaitEvent)             \
  X(cuStreamDestroy)               \
  X(cuDeviceGetDefaultMemPool)     \
  X(cuMemPoolSetAttribute)         \
  X(cuMemPoolGetAttribute)         \
  X(cuMemAllocAsync)               \
  X(cuMemFreeAsync)                \
  X(cuMemAlloc)                    \
  X(cuMemFree)                     \
  X(cuMemGetInfo)                  \
  X(cuMemcpyHtoDAsync)             \
  X(cuMemcpyDtoHAsync)             \
  X(cuMemcpyDtoDAsync)             \
  X(cuMemcpyDtoH)                  \
  X(cuMemsetD8Async)               \
  X(cuMemsetD16Async)              \
  X(cuMemsetD32Async)              \
  X(cuModuleLoadData)              \
  X(cuModuleGetFunction)           \
  X(cuModuleGetGlobal)             \
  X(cuFuncGetAttribute)            \
  X(cuFuncSetAttribute)            \
  X(cuLaunchKernel)                \
  X(cuLaunchKernelEx)              \
  X(cuTensorMapEncodeTiled)        \
  X(cuEventCreate)                 \
  X(cuEventRecord)                 \
  X(cuEventQuery)                  \
  X(cuEventSynchronize)            \
  X(cuStreamBeginCapture)          \
  X(cuStreamEndCapture)            \
  X(cuGraphInstantiateWithFlags)   \
  X(cuGraphLaunch)                 \
  X(cuGraphExecDestroy)            \
  X(cuGraphExecUpdate)             \
  X(cuGraphDestroy)

// Entry points newer than kMinDriverVersion: null on a driver that lacks them, so every use has
// a fallback. The function enumeration (CUDA 12.4) finds a kernel in a module without probing
// names that are not there (a probe's CUDA_ERROR_NOT_FOUND is an API error to the sanitizers).
// The graph queries and edge edits (their edge-data forms, CUDA 12.3) let a captured graph keep
// only the edges its launches' hazards need; without them its launches stay one chain.
#define TESSERA_CUDA_DRIVER_API_OPTIONAL(X) \
  X(cuModuleGetFunctionCount)               \
  X(cuModuleEnumerateFunctions)             \
  X(cuFuncGetName)                          \
  X(cuGraphGetNodes)                        \
  X(cuGraphGetRootNodes)                    \
  X(cuGraphNodeGetType)                     \
  X(cuGraphGetEdges)                        \
  X(cuGraphNodeGetDependentNodes)           \
  X(cuGraphAddDependencies)                 \
  X(cuGraphRemoveDependencies)

struct DriverApi {
#define TESSERA_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  TESSERA_CUDA_DRIVER_API(TESSERA_CUDA_DRIVER_MEMBER)
  TESSERA_CUDA_DRIVER_API_OPTIONAL(TESSERA_CUDA_DRIVER_MEMBER)
#undef TESSERA_CUDA_DRIVER_MEMBER
  int version = 0;  // cuDriverGetVersion: 13000 for CUDA 13.0
};

// The oldest driver Tessera accepts (CUDA 12.0: cuGetProcAddress_v2, stream-ordered pools).
inline constexpr int kMinDriverVersion = 12000;

// True when the driver loaded and initialised (cuInit); else false with the reason and the
// remedy in *why. Never throws.
bool driver_available(std::string* why);
// The loaded driver; throws BackendError (with the reason of driver_available) when it is not.
const DriverApi& driver();

// "13.0" for 13000.
std::string version_string(int cuda_version);

// The one check every driver call goes through: throws BackendError naming the call, the
// CUresult's name and description, what Tessera was doing (`context`, may be empty) and, for
// the errors that have one, what to do about it.
void check(CUresult result, std::string_view call, std::string_view context = {});

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
std::string describe(CUresult result);

}  // namespace tessera::backend::cuda

// Calls a driver entry point through the table and checks it: TESSERA_CU(cuMemFreeAsync, p, s).
// The macro argument `fn` is stringized before expansion, so errors show the API's own name.
#define TESSERA_CU(fn, ...) \
  ::tessera::backend::cuda::check(::tessera::backend::cuda::driver().fn(__VA_ARGS__), #fn)
// The same, saying what Tessera was doing: TESSERA_CU_WHILE("allocating 4 GiB", cuMemAllocAsync,
// ...).
#define TESSERA_CU_WHILE(context, fn, ...) \
  ::tessera::backend::cuda::check(::tessera::backend::cuda::driver().fn(__VA_ARGS__), #fn, context)

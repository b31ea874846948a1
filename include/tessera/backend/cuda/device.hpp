// The GPUs the driver reports, and their limits. Queries only: no context is created, so the doctor
// can list GPUs that Tessera cannot use (older than sm_80) without touching them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/backend/cuda/nvrtc.hpp"

namespace tessera::backend::cuda {

// The oldest compute capability Tessera generates code for.
inline constexpr int kMinComputeMajor = 8;

struct DeviceProps {
  int ordinal = 0;
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int multiprocessors = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  int64_t max_grid_x = 0;
  int64_t max_block_x = 0;
  int64_t shared_per_block = 0;        // without opting in
  int64_t shared_per_block_optin = 0;  // with cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)
  size_t total_memory = 0;
  bool memory_pools = false;  // cuMemAllocAsync is supported
};

// Number of GPUs the driver reports; throws BackendError when the driver is not usable.
int device_count();
// Properties of GPU `ordinal`; throws UsageError for an ordinal the driver does not report.
DeviceProps device_props(int ordinal);

// The exact architecture to compile for: sm_XY, with the "a" suffix (arch-specific features such
// as wgmma) on the architectures that have one (sm_90a and newer).
Arch exact_arch(int cc_major, int cc_minor);
inline Arch exact_arch(const DeviceProps& p) {
  return exact_arch(p.cc_major, p.cc_minor);
}

}  // namespace tessera::backend::cuda

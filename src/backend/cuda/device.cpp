#include "tessera/backend/cuda/device.hpp"

#include <array>

#include "tessera/backend/cuda/driver.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

int device_count() {
  int count = 0;
  TESSERA_CU(cuDeviceGetCount, &count);
  return count;
}

DeviceProps device_props(int ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    fail<UsageError>("GPU cuda:", ordinal, " does not exist: the driver reports ", count,
                     count == 1 ? " GPU (cuda:0)" : " GPUs", "; use a device index below ", count);
  CUdevice dev = 0;
  TESSERA_CU(cuDeviceGet, &dev, ordinal);

  DeviceProps p;
  p.ordinal = ordinal;
  std::array<char, 256> name{};
  TESSERA_CU(cuDeviceGetName, name.data(), static_cast<int>(name.size()), dev);
  p.name = name.data();
  auto attribute = [&](CUdevice_attribute a) {
    int value = 0;
    TESSERA_CU(cuDeviceGetAttribute, &value, a, dev);
    return value;
  };
  p.cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  p.cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  p.multiprocessors = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  p.warp_size = attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
  p.max_threads_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
  p.max_grid_x = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
  p.max_block_x = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
  p.shared_per_block = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
  p.shared_per_block_optin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  p.memory_pools = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED) != 0;
  TESSERA_CU(cuDeviceTotalMem, &p.total_memory, dev);
  return p;
}

Arch exact_arch(int cc_major, int cc_minor) {
  // Architecture-specific ("a") targets exist from Hopper on; sm_80/86/89 have none.
  return Arch{cc_major, cc_minor, cc_major >= 9};
}

}  // namespace tessera::backend::cuda

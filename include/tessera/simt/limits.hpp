// What a launch is checked against besides the contract: the limits of the device and of the
// compiled function, read from the driver when a launch is prepared (or made up by the CPU tests).
#pragma once

#include <string>

#include "tessera/simt/contract.hpp"

namespace tessera::simt {

struct DeviceLimits {
  int ordinal = 0;
  std::string name;  // "NVIDIA H200"
  ComputeCapability cc = {9, 0};
  index_t max_threads_per_block = 1024;
  index_t max_block[3] = {1024, 1024, 64};
  index_t max_grid[3] = {2147483647, 65535, 65535};
  index_t shared_per_block = 48 * 1024;        // without opting in
  index_t shared_per_block_optin = 48 * 1024;  // the most a function can opt in to
  int warp_size = 32;
};

struct FunctionLimits {
  index_t max_threads_per_block = 1024;  // on this device, given the function's registers
  index_t static_shared_bytes = 0;       // __shared__ arrays declared in the kernel
  int registers = 0;                     // per thread
};

}  // namespace tessera::simt

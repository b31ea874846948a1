// The non-template core of prepare<K>(): a launch's shape against the kernel's contract, its
// witness and the device's and function's limits. Pure C++ (no driver), so every rule is tested
// on the CPU with made-up limits. Every failure is a LaunchError that names the kernel, the rule
// and both values, and says what to change.
#pragma once

#include <string>
#include <string_view>

#include "tessera/simt/contract.hpp"
#include "tessera/simt/limits.hpp"

namespace tessera::simt::detail {

// A contract without its relations (which are checked per launch), plus what the kernel's witness
// needs of the block shape.
struct ContractView {
  std::string_view kernel;
  int rank = 1;
  BlockRule block_rule = BlockRule::Any;
  index_t block[3] = {1, 1, 1};  // exact shape or maximum per axis; unused axes are 1
  index_t dynamic_shared_bytes = 0;
  ComputeCapability min_cc = {8, 0};
  std::string_view witness;            // "Index1D"
  unsigned witness_block[2] = {0, 0};  // exact x, y the witness needs (0: any)
  unsigned block_x_multiple = 1;       // blockDim.x must be a multiple of this
};

// A launch as CUDA sees it: three axes each, unused axes 1.
struct Geometry {
  index_t grid[3] = {1, 1, 1};
  index_t block[3] = {1, 1, 1};
  index_t dynamic_shared_bytes = 0;
  bool empty() const { return grid[0] == 0 || grid[1] == 0 || grid[2] == 0; }
};

// prepare<K>(): the contract's rules (block shape, witness shape, compute capability) and the
// device's and function's limits. A grid with no blocks is allowed (the launch does nothing).
void check_contracted_launch(const ContractView& contract, const Geometry& g,
                             const DeviceLimits& device, const FunctionLimits& function);

// launch_unchecked(): only what the driver would refuse anyway (extents, threads per block,
// shared memory), said in Tessera's words.
void check_device_limits(std::string_view kernel, const Geometry& g, const DeviceLimits& device,
                         const FunctionLimits& function);

// "(256)", "(16, 16)": the first `rank` extents.
std::string dims_text(const index_t* v, int rank);

}  // namespace tessera::simt::detail

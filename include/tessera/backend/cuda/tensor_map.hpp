// What the code generator asks the launcher to encode for a kernel that copies tiles with the
// tensor-memory accelerator (TMA, sm_90): one descriptor per operand, passed after the kernel's
// own parameters as abi.hpp's TesseraTensorMap. Plain data, shared by codegen and launch.
#pragma once

namespace tessera::backend::cuda {

// A descriptor over a tensor parameter of rank 2 to 4: boxes of box_inner elements along the
// innermost axis, box_outer along axis `outer_axis` and 1 along the others, swizzled as the
// kernel's wgmma descriptors expect. Elements of a box outside the tensor read as zero.
struct TensorMapSpec {
  int param = 0;
  int box_inner = 64;
  int box_outer = 64;
  int swizzle_bytes = 128;  // 32, 64 or 128
  int outer_axis = 0;
  friend bool operator==(const TensorMapSpec&, const TensorMapSpec&) = default;
};

}  // namespace tessera::backend::cuda

// What a backend is given to run a kernel: each parameter's memory (or scalar value) and the grid.
// Shared by the backends; depends only on core.
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/shape.hpp"

namespace tessera::backend {

struct TensorArg {
  void* data = nullptr;  // element [0, ..., 0]
  DType dtype = DType::F32;
  Shape shape;
  Shape strides;  // in elements
};

struct ArgValue {
  TensorArg tensor;     // Out and In parameters
  double scalar = 0;    // Scalar parameters of a floating-point dtype
  int64_t iscalar = 0;  // Scalar parameters of an integer or bool dtype
};

struct LaunchArgs {
  std::vector<ArgValue> args;  // one per kernel parameter, in order
  Shape grid;                  // tile blocks along each axis
};

}  // namespace tessera::backend

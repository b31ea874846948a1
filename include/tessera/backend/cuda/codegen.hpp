// IR -> CUDA C++. The generated source includes only the device runtime headers embedded in the
// library (device_runtime.hpp), follows the calling convention of abi.hpp, and is readable: one
// statement per IR op, named after it.
#pragma once

#include <string>
#include <vector>

#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::backend::cuda {

// What the launch guarantees about a tensor parameter beyond its dtype and rank. Part of the
// specialization key, so the generated code may rely on it.
struct TensorSpec {
  bool inner_unit_stride = false;  // the innermost axis has stride 1
  // The largest of 16, 8, 4, 2, 1 bytes that divides the base address and every outer stride
  // (in bytes): vector accesses of this width never straddle rows or misalign.
  int vector_bytes = 1;
};

struct KernelSpec {
  Arch arch;
  std::vector<TensorSpec> tensors;  // one per kernel parameter (ignored for Scalar parameters)
};

struct EmittedKernel {
  std::string source;       // complete translation unit for NVRTC
  std::string entry;        // extern "C" kernel name
  int threads = 128;        // threads per block
  size_t shared_bytes = 0;  // dynamic shared memory per block
};

// Throws KernelError (at the op's location) for IR the backend cannot lower.
EmittedKernel emit(const ir::Function& f, const KernelSpec& spec);

// The device runtime headers (our own), as {name, text} pairs for NVRTC's header list.
const std::vector<std::pair<std::string, std::string>>& device_runtime_headers();

}  // namespace tessera::backend::cuda

// The whole compile of one specialization of a kernel, as a launch needs it, in one function a
// reader can follow (compile_pipeline.cpp):
//
//   trace ─▶ IR passes (compile.cpp) ─▶ the device's backend (backend.hpp): on a GPU,
//   lowering to CUDA C++ ─▶ NVRTC (JIT cache) ─▶ load
//
// Each stage is timed (TESSERA_LOG=compile) and dumpable (TESSERA_DUMP; compile.hpp lists the
// stages). Private to the runtime (launch.cpp calls it) and to the CUDA backend's target.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/gpu.hpp"

namespace tessera::runtime {

struct SpecializationSource {
  std::string name;  // the kernel's, for logs
  Device device;
  std::function<ir::Function()> trace;  // the body, traced
  // The IR of an earlier run of the program (ir_cache.hpp), tried before tracing; null for none.
  std::function<std::shared_ptr<const CompiledKernel>()> read_back;
  // Keeps freshly compiled IR for a later run (ir_cache.hpp); null: not kept.
  std::function<void(const CompiledKernel&)> keep;
  // When the backend specializes_on_tensors(): what its code may assume about each argument.
  std::vector<backend::cuda::TensorSpec> tensors;
};

struct CompiledSpecialization {
  std::shared_ptr<const ir::Function> traced;  // as traced; null when read back
  std::shared_ptr<const CompiledKernel> kernel;
  std::shared_ptr<const GpuKernel> gpu;  // on a GPU: loaded there
};

CompiledSpecialization compile_specialization(const SpecializationSource& s);

// Each op's location and a description, in ir::walk pre-order: what a GPU error report names.
std::vector<std::pair<SourceLoc, std::string>> op_sites(const ir::Function& f);

}  // namespace tessera::runtime

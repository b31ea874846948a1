// Kernels for the CUDA code generator's compile-only tests: traced from ordinary DSL code
// (tests/tile/trace_kernel.hpp), promoted and cleaned as runtime::compile does, then emitted for
// several architectures and TensorSpecs and compiled with NVRTC.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::test {

// A traced, promoted, verified and dead-code-free kernel.
struct CorpusKernel {
  std::string name;
  std::function<ir::Function()> make;
};
// Every kernel of the corpus; together they use every op of the table that survives promotion.
const std::vector<CorpusKernel>& corpus();
ir::Function corpus_kernel(const std::string& name);

// The IR pipeline of runtime::compile up to the backend: promote_locals, verify, dce.
ir::Function prepared(ir::Function f);

// TensorSpecs for every parameter: 16-byte aligned rows whose extent may end inside a vector (a
// column slice), the same with whole vectors per row (a contiguous tensor), or only
// element-aligned.
backend::cuda::KernelSpec aligned_spec(const ir::Function& f, backend::cuda::Arch arch);
backend::cuda::KernelSpec contiguous_spec(const ir::Function& f, backend::cuda::Arch arch);
backend::cuda::KernelSpec unaligned_spec(const ir::Function& f, backend::cuda::Arch arch);

inline const backend::cuda::Arch kSm80{8, 0, false};
inline const backend::cuda::Arch kSm90a{9, 0, true};

// The kernel's own code: the emitted source after the device runtime.
std::string kernel_part(const std::string& source);

// Emits f with `spec` and compiles it for spec.arch; fails the current test with the source and
// NVRTC's log when it does not compile.
struct Built {
  backend::cuda::EmittedKernel kernel;
  backend::cuda::CompiledCuda compiled;
};
Built build(const ir::Function& f, const backend::cuda::KernelSpec& spec);

}  // namespace tessera::test

// The CUDA backend as the runtime calls it (tessera/backend/backend.hpp): the code generator's
// lowering, then NVRTC and the load through the runtime's GPU layer (gpu_launch.cpp).
#include "cuda_backend.hpp"

#include "compile_log.hpp"  // src/runtime (private to it and to this target)
#include "compile_pipeline.hpp"
#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/cuda/launch.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/launch.hpp"
#include "tessera/runtime/stream.hpp"

namespace tessera::backend::cuda {

namespace {
class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }
  // The generated code takes vector and TMA paths that each tensor's alignment allows.
  bool specializes_on_tensors() const override { return true; }

  Loaded compile(const KernelToCompile& k) const override {
    const std::string name(k.name);
    const ir::Function& fn = k.fn;
    // Lowering: the IR as CUDA C++ for this GPU's architecture and these tensors (layouts,
    // shared-memory plan, pipelined loops: codegen.cpp). TESSERA_DUMP=cuda.
    const KernelSpec spec{
        runtime::gpu_arch(k.device), std::vector<TensorSpec>(k.tensors.begin(), k.tensors.end()),
        programmatic_launch_enabled(), l2_prefetch_enabled(), load_order_enabled()};
    const EmittedKernel e = runtime::timed(name, "lower", [&] { return emit(fn, spec); });
    if (!e.layouts.empty()) runtime::dump_file("layouts", fn.name, e.source, ".layouts", e.layouts);
    // NVRTC, through the JIT cache (TESSERA_DUMP=ptx,cubin), and the load on the device:
    // gpu_prepare (gpu_launch.cpp) times both.
    return {runtime::gpu_prepare(
        k.device, {fn.name, e.entry, e.source, e.threads, e.blocks_per_tile, e.shared_bytes,
                   runtime::gpu_params(fn.params), runtime::op_sites(fn), e.reports_errors,
                   e.tensor_maps, e.blocks_per_sm, e.waits_for_prior_grids})};
  }

  void check_launch(const Loaded& loaded, const LaunchArgs& args) const override {
    runtime::gpu_check_launch(*loaded.gpu, args);
  }

  // On the stream of this thread's StreamScope, or the device's own; after the launches it
  // follows, waited for on the device when they are on another stream.
  std::shared_ptr<runtime::Completion> start(LaunchToStart&& l) const override {
    std::shared_ptr<runtime::Completion> done = runtime::gpu_launch(
        *l.gpu, l.args, std::move(l.label), runtime::current_stream(l.device), l.writers, l.readers,
        /*checked=*/true);  // by check_launch, before the launch started
    done->follow(l.writers);
    return done;
  }

  void check_compiles(const ir::Function& fn) const override { nvrtc_check(fn); }
};

const CudaBackend the_backend;
// Registered when this file is linked: Tessera::tessera makes the linker keep it (the symbol
// below), so the static library cannot drop it silently.
const bool registered = (register_backend(DeviceKind::CUDA, the_backend), true);
}  // namespace

const Backend& backend() {
  (void)registered;
  return the_backend;
}

}  // namespace tessera::backend::cuda

// Named by Tessera::tessera's link options (-u): what makes the linker take this file.
extern "C" void tessera_cuda_backend_linked() {}

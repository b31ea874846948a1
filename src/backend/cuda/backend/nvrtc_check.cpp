#include <chrono>

#include "compile_log.hpp"  // src/runtime (private to it and to this target)
#include "cuda_backend.hpp"
#include "slow_notice.hpp"
#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/cuda/launch.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/env.hpp"

namespace tessera::backend::cuda {

// This is how CI, which has no GPU, checks that every kernel its tests and examples launch
// compiles for the GPU: once with the 16-byte vector paths and once with scalar accesses.
void nvrtc_check(const ir::Function& f) {
  using runtime::timed;
  for (std::string_view item : runtime::env_list("TESSERA_NVRTC_CHECK")) {
    const Arch arch = parse_arch(item, "TESSERA_NVRTC_CHECK");
    for (const TensorSpec tensor : {TensorSpec{true, 16, true}, TensorSpec{false, 1, false}}) {
      KernelSpec spec{arch, std::vector(f.params.size(), tensor)};
      spec.l2_prefetch = l2_prefetch_enabled();  // so the dumps show what a launch would run
      spec.issue_loads_first = load_order_enabled();
      const std::string variant = arch.str() + (tensor.inner_unit_stride ? "" : ".unaligned");
      const std::string name = f.name + "." + variant;
      const EmittedKernel e = timed(f.name, "lower " + variant, [&] { return emit(f, spec); });
      const CompiledCuda c = [&] {
        runtime::CompileStage stage(f.name, "nvrtc " + variant);
        // Like a launch's compile (JitCache::get), a slow one says what it is doing.
        const runtime::SlowWorkNotice notice(
            std::chrono::milliseconds(500),
            detail::cat("tessera: compiling ", f.name, " for ", arch.str(),
                        " (TESSERA_NVRTC_CHECK); TESSERA_QUIET=1 hides this line"),
            !runtime::status_lines_silenced());
        return compile_cuda(e.source, f.name + ".cu", arch);
      }();
      // What a GPU of this architecture would run, visible on a machine without one (cubin:
      // `cuobjdump -sass` shows its SASS).
      if (!e.layouts.empty()) runtime::dump_file("layouts", name, e.source, ".layouts", e.layouts);
      runtime::dump_file("cuda", name, e.source, ".cu", e.source);
      runtime::dump_file("ptx", name, e.source, ".ptx", c.ptx);
      runtime::dump_file("cubin", name, e.source, ".cubin",
                         std::string_view(c.cubin.data(), c.cubin.size()));
    }
  }
}

}  // namespace tessera::backend::cuda

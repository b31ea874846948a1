#include "tessera/runtime/compile.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "slow_notice.hpp"
#include "tessera/analysis/canonical_order.hpp"
#include "tessera/analysis/dce.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/analysis/safety.hpp"
#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"
#include "tessera/runtime/env.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace tessera::runtime {

bool dump_enabled(std::string_view stage) {
  return env_list_has("TESSERA_DUMP", stage);
}

std::string dump_dir() {
  const char* env = std::getenv("TESSERA_DUMP_DIR");
  return env && *env ? env : "tessera-dump";
}

void dump_file(std::string_view stage, const std::string& name, const std::string& key,
               std::string_view ext, std::string_view text) {
  if (!dump_enabled(stage)) return;
  namespace fs = std::filesystem;
  const fs::path dir = dump_dir();
  const fs::path file = dir / detail::cat(name, ".", hex64(fnv1a64(key)).substr(0, 8), ext);
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out)
    std::cerr << "tessera: TESSERA_DUMP=" << stage << ": cannot write " << file << "\n";
  else
    std::cerr << "tessera: TESSERA_DUMP=" << stage << ": wrote " << file << "\n";
}

namespace {
void dump(std::string_view stage, const ir::Function& f) {
  if (dump_enabled(stage)) std::cerr << "// ---- " << stage << " ----\n" << ir::print(f);
}
// TESSERA_NVRTC_CHECK=sm_80,sm_90a: also generate CUDA C++ for each listed architecture and
// compile it with NVRTC (not run), whatever device the kernel runs on. This is how CI, which has
// no GPU, checks that every kernel its tests and examples launch compiles for the GPU: once with
// the 16-byte vector paths and once with scalar accesses.
void nvrtc_check(const ir::Function& f) {
  for (std::string_view item : env_list("TESSERA_NVRTC_CHECK")) {
    const backend::cuda::Arch arch = backend::cuda::parse_arch(item, "TESSERA_NVRTC_CHECK");
    for (const backend::cuda::TensorSpec tensor :
         {backend::cuda::TensorSpec{true, 16, true}, backend::cuda::TensorSpec{false, 1, false}}) {
      const backend::cuda::KernelSpec spec{arch, std::vector(f.params.size(), tensor)};
      const backend::cuda::EmittedKernel e = backend::cuda::emit(f, spec);
      const backend::cuda::CompiledCuda c = [&] {
        // Like a launch's compile (JitCache::get), a slow one says what it is doing.
        const SlowWorkNotice notice(
            std::chrono::milliseconds(500),
            detail::cat("tessera: compiling ", f.name, " for ", arch.str(),
                        " (TESSERA_NVRTC_CHECK); TESSERA_QUIET=1 hides this line"),
            !status_lines_silenced());
        return backend::cuda::compile_cuda(e.source, f.name + ".cu", arch);
      }();
      // What a GPU of this architecture would run, visible on a machine without one.
      const std::string name =
          f.name + "." + arch.str() + (tensor.inner_unit_stride ? "" : ".unaligned");
      dump_file("cuda", name, e.source, ".cu", e.source);
      dump_file("ptx", name, e.source, ".ptx", c.ptx);
    }
  }
}

}  // namespace

std::shared_ptr<const CompiledKernel> compile(ir::Function f, Device device) {
  dump("traced", f);
  ir::verify_or_throw(f, "tracing");
  analysis::promote_locals(f);
  ir::verify_or_throw(f, "promote_locals");
  analysis::canonical_order(f);  // from here on, the IR is the same whatever compiler traced it
  ir::verify_or_throw(f, "canonical_order");
  analysis::check_safety(f);
  analysis::dce(f);
  ir::verify_or_throw(f, "dce");
  dump("ir", f);
  nvrtc_check(f);
  return std::make_shared<const CompiledKernel>(CompiledKernel{std::move(f), device});
}

}  // namespace tessera::runtime

#include "compile_pipeline.hpp"

#include "compile_log.hpp"
#include "tessera/core/error.hpp"

namespace tessera::runtime {

CompiledSpecialization compile_specialization(const SpecializationSource& s) {
  CompileStage total(s.name, "total");
  total.note("on " + s.device.str());
  CompiledSpecialization c;

  // 1. The IR: read back from an earlier run, or traced and put through the IR passes.
  if (s.read_back) c.kernel = timed(s.name, "read back", s.read_back);
  if (!c.kernel) {
    c.traced = std::make_shared<const ir::Function>(timed(s.name, "trace", s.trace));
    c.kernel = compile(*c.traced, s.device);  // verify, promote_locals, ..., dce (compile.cpp)
    if (s.keep) s.keep(*c.kernel);
  }
  if (!s.device.is_cuda()) return c;  // the CPU backend runs the IR itself

  // 2. Lowering: the IR as CUDA C++ for this GPU's architecture and these tensors (layouts,
  //    shared-memory plan, pipelined loops: backend/cuda/codegen.cpp). TESSERA_DUMP=cuda.
  const backend::cuda::KernelSpec spec{gpu_arch(s.device), s.tensors};
  const backend::cuda::EmittedKernel e =
      timed(s.name, "lower", [&] { return backend::cuda::emit(c.kernel->fn, spec); });

  // 3. NVRTC, through the JIT cache (TESSERA_DUMP=ptx,cubin), and 4. the load on the device:
  //    gpu_prepare (gpu_launch.cpp) times both.
  c.gpu = gpu_prepare(
      s.device, {c.kernel->fn.name, e.entry, e.source, e.threads, e.blocks_per_tile, e.shared_bytes,
                 gpu_params(c.kernel->fn.params), op_sites(c.kernel->fn), e.reports_errors,
                 e.tensor_maps, e.blocks_per_sm});
  return c;
}

std::vector<std::pair<SourceLoc, std::string>> op_sites(const ir::Function& f) {
  std::vector<std::pair<SourceLoc, std::string>> sites;
  ir::walk(f.body, [&](const ir::Op& op) {
    std::string what(ir::mnemonic(op.kind));
    if (op.kind == ir::OpKind::Load)
      what = detail::cat(op.attrs.padded ? "load" : "unpadded load", " from '",
                         f.params.at(op.attrs.param).name, "' (tile shape ",
                         to_string(op.attrs.shape), ")");
    if (op.kind == ir::OpKind::Gather)
      what = detail::cat(op.attrs.padded ? "gather" : "unpadded gather", " from '",
                         f.params.at(op.attrs.param).name, "' (tile shape ",
                         to_string(op.attrs.shape), ")");
    if (op.kind == ir::OpKind::For) what = "for_range";
    sites.emplace_back(op.loc, std::move(what));
  });
  return sites;
}

}  // namespace tessera::runtime

#include "compile_pipeline.hpp"

#include "compile_log.hpp"
#include "tessera/backend/backend.hpp"
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

  // 2. The backend of the device: on a GPU, lowering to CUDA C++ for its architecture and these
  //    tensors (TESSERA_DUMP=cuda), NVRTC through the JIT cache (TESSERA_DUMP=ptx,cubin) and the
  //    load (src/backend/cuda/backend/cuda_backend.cpp); on the CPU nothing, the interpreter runs
  //    the IR itself (tessera/backend/backend.hpp).
  c.gpu = backend::backend_for(s.device.kind())
              .compile({s.name, s.device, c.kernel->fn, s.tensors})
              .gpu;
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

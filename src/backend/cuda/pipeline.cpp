#include "tessera/backend/cuda/pipeline.hpp"

#include <vector>

namespace tessera::backend::cuda {

using ir::OpClass;
using ir::OpKind;
using ir::ValueId;

bool scalar_and_pure(const ir::Function& f, const ir::Op& op) {
  // Elementwise ops, kernel interface queries and constants touch no memory and no other thread;
  // every other class loads, stores, exchanges elements, creates a distributed tile or holds a
  // region.
  const OpClass cls = ir::op_info(op.kind).cls;
  if (!ir::is_elementwise(cls) && cls != OpClass::Interface && op.kind != OpKind::Constant)
    return false;
  for (ValueId r : op.results)
    if (!f.type(r).is_scalar()) return false;
  return true;
}

bool producer_slice(const ir::Function& f, const std::vector<const ir::Op*>& def, ValueId induction,
                    std::vector<ValueId> roots, std::set<const ir::Op*>& slice) {
  while (!roots.empty()) {
    const ValueId v = roots.back();
    roots.pop_back();
    const ir::Op* d = def[v];
    if (!d) {
      if (v != induction) return false;  // only the induction variable has no op
      continue;
    }
    if (!scalar_and_pure(f, *d)) return false;
    if (slice.insert(d).second) roots.insert(roots.end(), d->operands.begin(), d->operands.end());
  }
  return true;
}

namespace {

class Matcher {
 public:
  Matcher(const ir::Function& f, const KernelSpec& spec, PipelineTarget target)
      : f_(f), spec_(spec), target_(target) {
    def_.assign(f.values.size(), nullptr);
    uses_.assign(f.values.size(), 0);
    ir::walk(f.body, [&](const ir::Op& op) {
      for (ValueId r : op.results) def_[r] = &op;
      for (ValueId v : op.operands) ++uses_[v];
    });
  }

  std::optional<MmaPipeline> run() {
    std::optional<MmaPipeline> found;
    for (const ir::Op& op : f_.body.ops) {
      if (op.kind != OpKind::For) continue;
      std::optional<MmaPipeline> p = match(op);
      if (!p) continue;
      if (found) return std::nullopt;  // one pipeline per kernel
      found = std::move(p);
    }
    return found;
  }

 private:
  // A padded (zero) load of a rank-2 f16/bf16 input whose rows are 16-byte aligned: what TMA
  // (and cp.async, 16 bytes at a time) copies, filling outside the tensor with zeros as the
  // load's padding does.
  bool tma_operand(const ir::Op& load, const ir::Op& mma) const {
    if (load.kind != OpKind::Load || uses_[load.results[0]] != 1) return false;
    const ir::Param& p = f_.params.at(static_cast<size_t>(load.attrs.param));
    const TensorSpec& t = spec_.tensors.at(static_cast<size_t>(load.attrs.param));
    return p.kind == ir::ParamKind::In && p.rank == 2 &&
           (p.dtype == DType::F16 || p.dtype == DType::BF16) && load.attrs.padded &&
           load.attrs.value == 0 && !load.attrs.at_element && t.inner_unit_stride &&
           t.vector_bytes >= 16 && load.attrs.shape.size() == 2 && &load != &mma;
  }

  std::optional<MmaPipeline> match(const ir::Op& loop) const {
    const ir::Block& body = loop.regions[0];
    if (loop.results.size() != 1 || body.args.size() != 2 || body.ops.empty()) return std::nullopt;
    const ir::Op* step = def_[loop.operands[2]];
    if (!step || step->kind != OpKind::Constant || step->attrs.value != 1) return std::nullopt;
    const ir::Op& yield = body.ops.back();
    const ir::Op* mma = def_[yield.operands[0]];
    if (!mma || mma->kind != OpKind::Mma || mma->operands[2] != body.args[1]) return std::nullopt;
    const ir::Op* a = def_[mma->operands[0]];
    const ir::Op* b = def_[mma->operands[1]];
    if (!a || !b || !tma_operand(*a, *mma) || !tma_operand(*b, *mma)) return std::nullopt;
    const ir::Type& acc = f_.type(mma->results[0]);
    if (acc.dtype != DType::F32 || acc.shape.size() != 2) return std::nullopt;

    MmaPipeline p;
    p.loop = &loop;
    p.load_a = a;
    p.load_b = b;
    p.mma = mma;
    p.a_param = a->attrs.param;
    p.b_param = b->attrs.param;
    p.operand = f_.params.at(static_cast<size_t>(p.a_param)).dtype;
    if (f_.params.at(static_cast<size_t>(p.b_param)).dtype != p.operand) return std::nullopt;
    p.bm = static_cast<int>(a->attrs.shape[0]);
    p.bk = static_cast<int>(a->attrs.shape[1]);
    p.bn = static_cast<int>(b->attrs.shape[1]);
    if (b->attrs.shape[0] != p.bk || acc.shape[0] != p.bm || acc.shape[1] != p.bn)
      return std::nullopt;
    p.target = target_;
    if (target_ == PipelineTarget::Ampere) {
      if (!ampere_warps(p)) return std::nullopt;
    } else if ((p.bm != 64 && p.bm != 128) || p.bn % 64 != 0 || p.bn > 256 || p.bk % 16 != 0 ||
               (p.bk > 64 && p.bk % 64 != 0)) {
      // wgmma is m64: one consumer warpgroup per 64 rows (two at most); B in 64-column strips
      // of at most 256 (the widest wgmma); K in steps of 16, in strips of at most 64.
      return std::nullopt;
    }

    // Everything else in the body computes scalars: the tile coordinates of the loads.
    for (const ir::Op& op : body.ops)
      if (&op != a && &op != b && &op != mma && &op != &yield && !scalar_and_pure(f_, op))
        return std::nullopt;
    // The producer's slice: the bounds, and each load's coordinates, back to their roots.
    std::vector<ValueId> work = {loop.operands[0], loop.operands[1]};
    for (const ir::Op* load : {a, b})
      work.insert(work.end(), load->operands.begin(), load->operands.end());
    if (!producer_slice(f_, def_, body.args[0], std::move(work), p.producer_ops))
      return std::nullopt;
    return p;
  }

  const ir::Function& f_;
  const KernelSpec& spec_;
  const PipelineTarget target_;
  std::vector<const ir::Op*> def_;
  std::vector<int> uses_;
};

}  // namespace

std::optional<MmaPipeline> find_mma_pipeline(const ir::Function& f, const KernelSpec& spec) {
  const bool hopper = spec.arch.major == 9 && spec.arch.specific;
  const bool ampere = spec.arch.major == 8;
  if ((!hopper && !ampere) || f.grid_rank != 2) return std::nullopt;
  return Matcher(f, spec, hopper ? PipelineTarget::Hopper : PipelineTarget::Ampere).run();
}

}  // namespace tessera::backend::cuda

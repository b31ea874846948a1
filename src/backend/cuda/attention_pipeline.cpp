#include "tessera/backend/cuda/attention_pipeline.hpp"

#include <utility>
#include <vector>

#include "tessera/backend/cuda/pipeline.hpp"

namespace tessera::backend::cuda {

using ir::OpKind;
using ir::ValueId;

namespace {

class Matcher {
 public:
  Matcher(const ir::Function& f, const KernelSpec& spec) : f_(f), spec_(spec) {
    def_.assign(f.values.size(), nullptr);
    uses_.assign(f.values.size(), 0);
    ir::walk(f.body, [&](const ir::Op& op) {
      for (ValueId r : op.results) def_[r] = &op;
      for (ValueId v : op.operands) ++uses_[v];
    });
  }

  std::optional<AttentionPipeline> run() {
    const ir::Op* loop = nullptr;
    for (const ir::Op& op : f_.body.ops) {
      if (op.regions.empty()) continue;
      if (op.kind != OpKind::For || loop) return std::nullopt;  // one loop, and no if
      loop = &op;
    }
    if (!loop) return std::nullopt;
    return match(*loop);
  }

 private:
  const ir::Op* def(ValueId v) const { return def_[v]; }
  bool in_body(const ir::Op* op, const ir::Block& body) const {
    return op >= body.ops.data() && op < body.ops.data() + body.ops.size();
  }

  // A value used once, defined by an op of `kind` (nullptr otherwise).
  const ir::Op* single(ValueId v, OpKind kind) const {
    const ir::Op* d = def(v);
    return d && d->kind == kind && uses_[v] == 1 ? d : nullptr;
  }

  // v is load(...) or reshape(load(...)) to [rows, D], the load a TMA-able tile (see the header).
  std::optional<AttentionLoad> operand_load(ValueId v, AttentionPipeline& p) const {
    const ir::Op* load = single(v, OpKind::Load);
    if (const ir::Op* r = single(v, OpKind::Reshape)) {
      p.in_shared.insert(v);
      v = r->operands[0];
      load = single(v, OpKind::Load);
    }
    if (!load) return std::nullopt;
    p.in_shared.insert(v);
    const ir::Param& prm = f_.params.at(static_cast<size_t>(load->attrs.param));
    const TensorSpec& t = spec_.tensors.at(static_cast<size_t>(load->attrs.param));
    const Shape& shape = load->attrs.shape;
    if (prm.kind != ir::ParamKind::In || prm.rank < 2 || prm.rank > 4 ||
        (prm.dtype != DType::F16 && prm.dtype != DType::BF16) || !load->attrs.padded ||
        load->attrs.value != 0 || load->attrs.at_element || !t.inner_unit_stride ||
        t.vector_bytes < 16 || static_cast<int>(shape.size()) != prm.rank)
      return std::nullopt;
    AttentionLoad l;
    l.load = load;
    l.param = load->attrs.param;
    l.row_axis = -1;
    for (int a = 0; a + 1 < prm.rank; ++a) {
      if (shape[static_cast<size_t>(a)] == 1) continue;
      if (l.row_axis >= 0) return std::nullopt;  // two extents besides D
      l.row_axis = a;
    }
    if (l.row_axis < 0) return std::nullopt;
    l.rows = static_cast<int>(shape[static_cast<size_t>(l.row_axis)]);
    return l;
  }

  // An if in the loop body (a mask applied to some key tiles only) holds elementwise work: no
  // loop, load, store, mma or nested if, which the consumers could not hold in registers.
  static bool plain_if(const ir::Op& op) {
    bool plain = true;
    for (const ir::Block& r : op.regions)
      ir::walk(r, [&](const ir::Op& o) {
        if (!o.regions.empty() || o.kind == OpKind::Load || o.kind == OpKind::Store ||
            o.kind == OpKind::StorePart || o.kind == OpKind::Mma || o.kind == OpKind::Gather)
          plain = false;
      });
    return plain;
  }

  bool zero_constant(ValueId v) const {
    const ir::Op* d = def(v);
    return d && d->kind == OpKind::Constant && d->attrs.value == 0;
  }

  std::optional<AttentionPipeline> match(const ir::Op& loop) const {
    const ir::Block& body = loop.regions[0];
    const ir::Op* step = def(loop.operands[2]);
    if (!step || step->kind != OpKind::Constant || step->attrs.value != 1) return std::nullopt;
    AttentionPipeline p;
    p.loop = &loop;
    std::vector<const ir::Op*> mmas;
    int loads = 0;
    for (const ir::Op& op : body.ops) {
      if (op.kind == OpKind::If && !plain_if(op)) return std::nullopt;
      if ((!op.regions.empty() && op.kind != OpKind::If) ||
          ir::op_info(op.kind).cls == ir::OpClass::Store)
        return std::nullopt;
      if (op.kind == OpKind::Mma) mmas.push_back(&op);
      if (op.kind == OpKind::Load) ++loads;
    }
    if (mmas.size() != 2 || loads != 2) return std::nullopt;
    // The scores' mma takes a transposed load as b; the output's takes a cast as a.
    const auto is_scores = [&](const ir::Op* m) {
      const ir::Op* t = single(m->operands[1], OpKind::Permute);
      return t && t->attrs.perm == std::vector<int64_t>{1, 0};
    };
    p.s_mma = is_scores(mmas[0]) ? mmas[0] : mmas[1];
    p.pv_mma = p.s_mma == mmas[0] ? mmas[1] : mmas[0];
    if (!is_scores(p.s_mma) || is_scores(p.pv_mma)) return std::nullopt;
    for (const ir::Op* m : {p.s_mma, p.pv_mma})
      if (!zero_constant(m->operands[2]) || f_.type(m->results[0]).dtype != DType::F32)
        return std::nullopt;

    const ValueId kt = p.s_mma->operands[1];
    p.in_shared.insert(kt);
    const auto q = operand_load(p.s_mma->operands[0], p);
    const auto k = operand_load(def(kt)->operands[0], p);
    const auto v = operand_load(p.pv_mma->operands[1], p);
    if (!q || !k || !v) return std::nullopt;
    p.q = *q;
    p.k = *k;
    p.v = *v;
    if (in_body(q->load, body) || !in_body(k->load, body) || !in_body(v->load, body))
      return std::nullopt;
    p.p_cast = single(p.pv_mma->operands[0], OpKind::Cast);
    if (!p.p_cast || !in_body(p.p_cast, body)) return std::nullopt;

    const auto dtype = [&](const AttentionLoad& l) {
      return f_.params.at(static_cast<size_t>(l.param)).dtype;
    };
    p.operand = dtype(p.q);
    if (dtype(p.k) != p.operand || dtype(p.v) != p.operand ||
        f_.type(p.p_cast->results[0]).dtype != p.operand)
      return std::nullopt;
    p.bm = p.q.rows;
    p.bn = p.k.rows;
    p.dim = static_cast<int>(p.q.load->attrs.shape.back());
    // wgmma is m64 (a consumer warpgroup per 64 rows, two at most); the scores' N and the head
    // dimension in 64-element strips; registers bound both at 128 (scores, probabilities and the
    // output accumulator of a thread together).
    if ((p.bm != 64 && p.bm != 128) || (p.bn != 64 && p.bn != 128) ||
        (p.dim != 64 && p.dim != 128) || p.v.rows != p.bn ||
        p.k.load->attrs.shape.back() != p.dim || p.v.load->attrs.shape.back() != p.dim)
      return std::nullopt;
    if (f_.type(p.s_mma->operands[0]).shape != Shape{p.bm, p.dim} ||
        f_.type(kt).shape != Shape{p.dim, p.bn} ||
        f_.type(p.pv_mma->operands[1]).shape != Shape{p.bn, p.dim} ||
        f_.type(p.s_mma->results[0]).shape != Shape{p.bm, p.bn} ||
        f_.type(p.pv_mma->results[0]).shape != Shape{p.bm, p.dim} ||
        f_.type(p.p_cast->results[0]).shape != Shape{p.bm, p.bn})
      return std::nullopt;

    // The producer's slice: the bounds, and each load's coordinates, back to their roots.
    std::vector<ValueId> work = {loop.operands[0], loop.operands[1]};
    for (const AttentionLoad* l : {&p.q, &p.k, &p.v})
      work.insert(work.end(), l->load->operands.begin(), l->load->operands.end());
    if (!producer_slice(f_, def_, body.args[0], std::move(work), p.producer_ops))
      return std::nullopt;
    return p;
  }

  const ir::Function& f_;
  const KernelSpec& spec_;
  std::vector<const ir::Op*> def_;
  std::vector<int> uses_;
};

}  // namespace

std::optional<AttentionPipeline> find_attention_pipeline(const ir::Function& f,
                                                         const KernelSpec& spec) {
  if (spec.arch.major != 9 || !spec.arch.specific) return std::nullopt;
  return Matcher(f, spec).run();
}

}  // namespace tessera::backend::cuda

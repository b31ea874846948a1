// The attention loop on sm_90a (attention_pipeline.hpp says which loops), built like
// FlashAttention-3's forward: a producer warp copies Q once per tile and K, V per key tile with TMA
// into an mbarrier-guarded ring; consumer warpgroups of 64 rows compute S = Q K^T by wgmma from
// shared memory, run the body's elementwise ops and row reductions on the accumulator fragments,
// and feed P (cast to 16 bits in registers) to wgmma as its register A operand against V.
//
// Register layouts (per consumer thread; warp w of warpgroup g, lane l; r0 = 64g + 16(w%4) + l/4):
//   Frag  a [BM, N] tile (or a [1, N] one, equal down its columns) in wgmma's accumulator order:
//         register i holds row r0 + 8*((i >> 1) & 1), column 8*(i >> 2) + 2*(l % 4) + (i & 1).
//   Row   a [BM, 1] tile: register r holds row r0 + 8r (the four lanes of a quad hold the same).
//   Uniform values are the general emitter's (one scalar, every thread the same).
// A row reduction is the thread's registers of the row, then two shuffles across the quad; a
// broadcast of a Row to [BM, N] is free; P's registers for k step kk are Frag registers
// 8kk .. 8kk + 7 packed in pairs, which is exactly wgmma's A fragment (PTX ISA, "Register
// Fragments"), so P never goes through shared memory.
//
// Shared memory: [Q: strips of [BM rows][128 B]][ring: stages of [K strips][V strips]], each
// strip a TMA box with 128-byte swizzle, 1024-byte aligned. K is read K-major (the layout of
// wgmma's A operand, 8-row groups 1024 bytes apart); V N-major ("transposed", strips BN * 128
// bytes apart), as the GEMM pipeline reads its B.
#include <algorithm>

#include "codegen_emitter.hpp"
#include "codegen_runtime.hpp"
#include "tessera/backend/cuda/abi_source.hpp"
#include "tessera/backend/cuda/pipeline.hpp"
#include "tessera/backend/cuda/software_pipeline.hpp"

namespace tessera::backend::cuda::detail {

using ir::OpClass;
using ir::OpKind;
using ir::ValueId;

namespace {

constexpr int kMaxStages = 4;
// Registers per thread after setmaxnreg: 24 * 128 + 240 * 256 = 64512 of a multiprocessor's 65536.
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;

// Thrown inside the lowering when the body has an op it does not hold in registers: the kernel
// then takes the general lowering (never a wrong one).
struct Unsupported {
  std::string why;
};

}  // namespace

class AttentionLowering {
 public:
  AttentionLowering(Emitter& e, const AttentionPipeline& a) : e_(e), a_(a) {
    kind_.assign(e.fn().values.size(), Kind::None);
    def_.assign(e.fn().values.size(), nullptr);
    uses_.assign(e.fn().values.size(), 0);
    ir::walk(e.fn().body, [&](const ir::Op& op) {
      for (ValueId r : op.results) def_[r] = &op;
      for (ValueId v : op.operands) ++uses_[v];
    });
    fast_ = e.fn().numerics == ir::Numerics::fast;
    find_output_add();
    find_store_cast();
  }

  EmittedKernel run();

 private:
  enum class Kind : uint8_t { None, Uniform, Row, Frag };

  const ir::Function& f() const { return e_.fn(); }
  const ir::Type& type(ValueId v) const { return e_.type(v); }
  const std::string& name(ValueId v) const { return e_.name(v); }
  template <class... Args>
  void line(Args&&... args) {
    e_.line(std::forward<Args>(args)...);
  }
  template <class... Args>
  void open(Args&&... args) {
    e_.open(std::forward<Args>(args)...);
  }
  void close(const std::string& tail = "}") { e_.close(tail); }
  [[noreturn]] static void unsupported(const ir::Op& op, const std::string& why) {
    throw Unsupported{std::string(ir::mnemonic(op.kind)) + ": " + why};
  }

  // ---- layouts ----
  Kind kind_of_shape(const Shape& s) const {
    if (s.size() == 2 && s[0] == a_.bm && s[1] == 1) return Kind::Row;
    if (s.size() == 2 && (s[0] == a_.bm || s[0] == 1) && s[1] % 8 == 0 && s[1] <= 256)
      return Kind::Frag;
    return Kind::None;
  }
  int regs(ValueId v) const {
    if (kind_[v] == Kind::Row) return 2;
    return static_cast<int>(type(v).shape.back() / 2);
  }
  // Element `i` of v in a loop over the registers of a value of kind k (v's kind, or uniform).
  std::string at(ValueId v, const std::string& i) const {
    return kind_[v] == Kind::Uniform ? name(v) : name(v) + "[" + i + "]";
  }
  void declare(ValueId v, Kind k) {
    kind_[v] = k;
    line(reg_type(type(v).dtype), " ", name(v), "[", regs(v), "];");
  }
  static std::string frag_row(const std::string& i) {
    return "(tsr_r0 + (((" + i + ") >> 1) & 1) * 8)";
  }
  static std::string frag_col(const std::string& i) {
    return "(((" + i + ") >> 2) * 8 + tsr_c0 + ((" + i + ") & 1))";
  }

  // ---- the consumer's ops ----
  void block(const ir::Block& b);
  void op(const ir::Op& op);
  void iota(const ir::Op& op);
  void broadcast(const ir::Op& op);
  void reshape(const ir::Op& op);
  void elementwise(const ir::Op& op);
  void reduce(const ir::Op& op);
  void scores_mma(const ir::Op& op);
  void output_mma(const ir::Op& op);
  void store(const ir::Op& op);
  void consumer_loop(const ir::Op& op);
  bool split_stages(const ir::Op& loop);
  void pipelined_loop(const ir::Op& loop);
  void emit_ops(const std::vector<const ir::Op*>& ops);
  void output_operands(const ir::Op& op);
  void output_issue(const ir::Op& op);
  void carried_update(const ir::Op& loop, bool b_side);
  void softmax_and_pv_operands(const ir::Op& loop);
  void fence_regs(ValueId v);
  void if_op(const ir::Op& op);
  // ---- the producer ----
  void producer_block(const ir::Block& b);
  void producer_loop(const ir::Op& op);
  void tma(const AttentionLoad& l, const std::string& dst, const std::string& bar,
           int64_t strip_bytes);
  // ---- the kernel ----
  void wgmma_functions();
  void tile_loop();

  void find_output_add();
  void find_store_cast();
  bool exp_of_difference(const ir::Op& op);

  Emitter& e_;
  const AttentionPipeline& a_;
  std::vector<Kind> kind_;
  std::vector<const ir::Op*> def_;
  std::vector<int> uses_;
  bool fast_ = false;
  // O = x + P V, with x before the mma in the body: P V accumulates onto x's registers (wgmma's
  // D += A B), so the add and a second [BM, D] accumulator go (nullptr: none such).
  const ir::Op* out_add_ = nullptr;
  // The cast of the f32 output to the stored f16/bf16 (through reshapes only): store() converts
  // then, so the cast's own round trip through 16 bits goes (nullptr: none such).
  const ir::Op* store_cast_ = nullptr;
  ValueId out_base_ = 0;
  // The software-pipelined loop (pipelined_loop): the body's ops in four groups, and whether each
  // value is on the output's side (depends on P V or on a value carried through it).
  bool pipelined_ = false, pingpong_ = false;
  std::vector<char> b_side_, pv_dep_;
  bool out_fused_ = false;  // output_mma took out_add_'s other operand as its accumulator
  std::vector<const ir::Op*> a_pre_, a_post_, b_pre_, b_post_;
  std::string ss_fn_, rs_fn_;
  // The ring the software pipeline made (software_pipeline.hpp): K, V, then Q once.
  const PipelinedLoop& ring() const { return e_.ring(); }
  int64_t buffer_offset(size_t b) const { return e_.buffer_offset(b); }
};

// ---- the consumer warpgroups -----------------------------------------------------------------

void AttentionLowering::block(const ir::Block& b) {
  for (const ir::Op& o : b.ops) op(o);
}

void AttentionLowering::op(const ir::Op& op) {
  e_.current_op_ = &op;
  if (op.kind == OpKind::Yield) return;  // the loop assigns its carried values
  if (op.kind == OpKind::For) return consumer_loop(op);
  if (op.kind == OpKind::Prefetch) return;  // issued in the prologue (grid_dependency_prologue)
  if (op.kind == OpKind::If) return if_op(op);
  // The loads and the reshapes/transposes between them and the mmas: shared memory only.
  if (!op.results.empty() && a_.in_shared.count(op.results[0])) {
    line("// ",
         comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + e_.op_text(op)),
         "  (in shared memory: TMA)");
    return;
  }
  if (op.kind == OpKind::Store || op.kind == OpKind::StorePart) {
    if (op.kind == OpKind::Store) return store(op);
    unsupported(op, "a partial store");
  }
  // Uniform values: the general emitter's code, as in every other kernel.
  const bool uniform =
      !op.results.empty() && std::all_of(op.results.begin(), op.results.end(), [&](ValueId r) {
        return e_.layout(r).kind == LayoutKind::Uniform;
      });
  if (uniform && op.regions.empty() && op.kind != OpKind::Load &&
      std::all_of(op.operands.begin(), op.operands.end(),
                  [&](ValueId v) { return kind_[v] == Kind::Uniform || kind_[v] == Kind::None; })) {
    e_.op(op);
    for (ValueId r : op.results) kind_[r] = Kind::Uniform;
    return;
  }
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + e_.op_text(op)));
  if (&op == a_.s_mma) return scores_mma(op);
  if (&op == a_.pv_mma) return output_mma(op);
  if (&op == out_add_ && out_fused_) {  // output_mma accumulated onto the other operand
    kind_[op.results[0]] = Kind::Frag;
    e_.alias(op.results[0], name(a_.pv_mma->results[0]));
    return;
  }
  if (&op == a_.p_cast && kind_[op.operands[0]] == Kind::Frag &&
      type(op.operands[0]).dtype == DType::F32) {
    // Rounded where output_mma packs P (cvt.rn.*x2 rounds each f32 as the cast would).
    kind_[op.results[0]] = Kind::Frag;
    return;
  }
  if (&op == store_cast_ && kind_[op.operands[0]] == Kind::Frag) {
    // Rounded where store() converts each value to the output's type (cvt.rn, as the cast).
    kind_[op.results[0]] = Kind::Frag;
    e_.alias(op.results[0], name(op.operands[0]));
    return;
  }
  if (op.kind == OpKind::Exp && exp_of_difference(op)) return;
  switch (ir::op_info(op.kind).cls) {
    case OpClass::Creation:
      if (op.kind == OpKind::Iota) return iota(op);
      break;
    case OpClass::Unary:
    case OpClass::UnaryFloat:
    case OpClass::UnaryBool:
    case OpClass::Classify:
    case OpClass::Cast:
    case OpClass::Binary:
    case OpClass::BinaryBool:
    case OpClass::BinaryFloat:
    case OpClass::BinaryInt:
    case OpClass::Compare:
    case OpClass::Select:
    case OpClass::Ternary:
      return elementwise(op);
    case OpClass::Broadcast:
      return broadcast(op);
    case OpClass::Reshape:
      return reshape(op);
    case OpClass::Reduce:
      return reduce(op);
    case OpClass::Interface:
    case OpClass::Permute:
    case OpClass::Slice:
    case OpClass::ArgReduce:
    case OpClass::Scan:
    case OpClass::Mma:
    case OpClass::Load:
    case OpClass::Gather:
    case OpClass::Store:
    case OpClass::Prefetch:
    case OpClass::For:
    case OpClass::If:
    case OpClass::Yield:
    case OpClass::Print:
    case OpClass::Local:
      break;
  }
  unsupported(op, "not held in accumulator registers");
}

void AttentionLowering::iota(const ir::Op& op) {
  const ValueId r = op.results[0];
  const Kind k = kind_of_shape(type(r).shape);
  const int axis = op.attrs.axis;
  if (k == Kind::None || (k == Kind::Row && axis != 0) ||
      (k == Kind::Frag && type(r).shape[0] == 1 && axis != 1))
    unsupported(op, "an iota that is not a row or column index of the tile");
  declare(r, k);
  e_.unroll();
  const std::string idx = k == Kind::Row ? "(tsr_r0 + i * 8)"
                          : axis == 0    ? frag_row("i")
                                         : frag_col("i");
  line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r),
       "[i] = ", cast(DType::I32, type(r).dtype, idx), ";");
}

void AttentionLowering::broadcast(const ir::Op& op) {
  const ValueId x = op.operands[0], r = op.results[0];
  const Shape& to = type(r).shape;
  if (kind_of_shape(to) != Kind::Frag) unsupported(op, "a broadcast to a shape not [BM, N]");
  if (kind_[x] == Kind::Row) {
    declare(r, Kind::Frag);
    e_.unroll();
    line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = ", name(x), "[(i >> 1) & 1];");
    return;
  }
  if (kind_[x] == Kind::Frag && type(x).shape.back() == to.back()) {  // [1, N] -> [BM, N]
    kind_[r] = Kind::Frag;
    e_.alias(r, name(x));
    return;
  }
  unsupported(op, "a broadcast of a tile not a row or a column");
}

void AttentionLowering::reshape(const ir::Op& op) {
  // The output tile's [BM, D] -> [1.., BM, 1.., D]: the same registers, for the store.
  const ValueId x = op.operands[0], r = op.results[0];
  const Shape& from = type(x).shape;
  const Shape& to = type(r).shape;
  int big = 0;
  for (size_t a = 0; a + 1 < to.size(); ++a) big += to[a] != 1;
  if (kind_[x] != Kind::Frag || from[0] != a_.bm || to.back() != from.back() || big != 1 ||
      numel(to) != numel(from))
    unsupported(op, "a reshape other than adding unit axes to an accumulator");
  kind_[r] = Kind::Frag;
  e_.alias(r, name(x));
}

void AttentionLowering::elementwise(const ir::Op& op) {
  const ValueId r = op.results[0];
  Kind k = Kind::Uniform;
  for (ValueId v : op.operands) {
    if (kind_[v] == Kind::Uniform) continue;
    if (kind_[v] == Kind::None || (k != Kind::Uniform && k != kind_[v]) ||
        type(v).shape != type(r).shape)
      unsupported(op, "operands in different register layouts");
    k = kind_[v];
  }
  declare(r, k);
  std::vector<std::string> el;
  for (ValueId v : op.operands) el.push_back(at(v, "i"));
  e_.unroll();
  line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = ", e_.element_expr(op, el), ";");
}

void AttentionLowering::reduce(const ir::Op& op) {
  const ValueId x = op.operands[0], r = op.results[0];
  const OpKind combine = op.kind == OpKind::ReduceSum   ? OpKind::Add
                         : op.kind == OpKind::ReduceMax ? OpKind::Max
                         : op.kind == OpKind::ReduceMin ? OpKind::Min
                                                        : OpKind::Constant;
  if (combine == OpKind::Constant || kind_[x] != Kind::Frag || type(x).shape[0] != a_.bm ||
      op.attrs.axis != 1 || type(x).dtype != DType::F32 || type(r).dtype != DType::F32)
    unsupported(op, "a reduction other than an f32 sum, max or min along a tile's rows");
  // The thread's own columns of each of its two rows, then the quad's four threads.
  declare(r, Kind::Row);
  const int n = regs(x);
  e_.unroll();
  open("for (int h = 0; h < 2; ++h)");
  line("float t = ", name(x), "[2 * h];");
  e_.unroll();
  open("for (int i = 0; i < ", n, "; ++i)");
  line("if (((i >> 1) & 1) == h && i != 2 * h) t = ",
       e_.combine_expr(combine, DType::F32, "t", name(x) + "[i]"), ";");
  close();
  line("t = ", e_.combine_expr(combine, DType::F32, "t", "__shfl_xor_sync(0xffffffffu, t, 1)"),
       ";");
  line("t = ", e_.combine_expr(combine, DType::F32, "t", "__shfl_xor_sync(0xffffffffu, t, 2)"),
       ";");
  line(name(r), "[h] = t;");
  close();
}

// S = Q K^T: Q's and K's strips in shared memory, both K-major.
void AttentionLowering::scores_mma(const ir::Op& op) {
  const ValueId r = op.results[0];
  declare(r, Kind::Frag);
  line("tsr_wgmma_fence();");
  for (int kk = 0; kk < a_.dim / 16; ++kk) {
    const int64_t strip = kk * 16 / 64, within = kk * 16 % 64 * 2;
    line(kk == 0 ? ss_fn_ + "_zero" : ss_fn_, "(", name(r), ", tsr_wgmma_desc(tsr_q + ",
         strip * a_.bm * 128 + within, " + tsr_wg * 8192, 16, 1024, 1), tsr_wgmma_desc(tsr_sk + ",
         strip * a_.bn * 128 + within, ", 16, 1024, 1), ", kk == 0 ? "0" : "1", ");");
  }
  line("tsr_wgmma_commit();");
  if (pipelined_) return;  // pipelined_loop waits for it after issuing P V
  line("tsr_wgmma_wait<0>();");
}

// O = P V: P's registers (the cast's Frag, packed in pairs) as A; V's strips N-major as B.
void AttentionLowering::output_mma(const ir::Op& op) {
  const ValueId p = op.operands[0], r = op.results[0];
  if (kind_[p] != Kind::Frag) unsupported(op, "probabilities not in accumulator registers");
  // P's f32 values when the cast was left to the packing (one cvt per pair instead of a round
  // trip through 16 bits per element and then the pack).
  const bool from_f32 = &op == a_.pv_mma && def_[p] == a_.p_cast &&
                        type(a_.p_cast->operands[0]).dtype == DType::F32 &&
                        kind_[a_.p_cast->operands[0]] == Kind::Frag;
  const std::string pv = from_f32 ? name(a_.p_cast->operands[0]) : name(p);
  declare(r, Kind::Frag);
  e_.unroll();
  // (The other operand may come later in the body: then the add stays an add.)
  out_fused_ = out_add_ && kind_[out_base_] != Kind::None;
  if (out_fused_) {
    line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = ", at(out_base_, "i"), ";");
  } else {
    line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = 0.0f;");
  }
  // P packed in pairs before the fence: wgmma's register operands are then ready (ptxas need not
  // insert its own warpgroup.arrive between the packing and the multiplies).
  const std::string pack = a_.operand == DType::BF16 ? "tsr_pack_bf16x2" : "tsr_pack_f16x2";
  line("unsigned tsr_pa[", a_.bn / 4, "];");
  e_.unroll();
  line("for (int i = 0; i < ", a_.bn / 4, "; ++i) tsr_pa[i] = ", pack, "(", pv, "[2 * i], ", pv,
       "[2 * i + 1]);");
  line("tsr_wgmma_fence();");
  for (int kk = 0; kk < a_.bn / 16; ++kk)
    line(rs_fn_, "(", name(r), ", tsr_pa[", 4 * kk, "], tsr_pa[", 4 * kk + 1, "], tsr_pa[",
         4 * kk + 2, "], tsr_pa[", 4 * kk + 3, "], tsr_wgmma_desc(tsr_sv + ",
         int64_t{kk} * 16 * 128, ", ", int64_t{a_.bn} * 128, ", 1024, 1));");
  line("tsr_wgmma_commit();");
  line("tsr_wgmma_wait<0>();");
}

// The add that takes P V onto a [BM, D] value computed earlier in the body (FlashAttention's
// acc * alpha + P V). Only under Numerics::fast: the tensor cores then add x inside the mma,
// rounding once fewer than the add would.
void AttentionLowering::find_output_add() {
  if (!fast_) return;
  const ValueId pv = a_.pv_mma->results[0];
  const ir::Block& body = a_.loop->regions[0];
  // What depends on P V within one trip of the body (its ops are in dependence order).
  pv_dep_.assign(f().values.size(), 0);
  pv_dep_[pv] = 1;
  for (const ir::Op& o : body.ops) {
    bool dep = false;
    for (ValueId v : o.operands) dep = dep || pv_dep_[v];
    for (const ir::Block& r : o.regions)
      ir::walk(r, [&](const ir::Op& in) {
        for (ValueId v : in.operands) dep = dep || pv_dep_[v];
      });
    if (dep)
      for (ValueId r : o.results) pv_dep_[r] = 1;
  }
  if (uses_[pv] != 1) return;
  bool after_mma = false;
  for (const ir::Op& o : body.ops) {
    if (&o == a_.pv_mma) after_mma = true;
    if (!after_mma || o.kind != OpKind::Add || o.operands.size() != 2) continue;
    const int at_pv = o.operands[0] == pv ? 0 : o.operands[1] == pv ? 1 : -1;
    if (at_pv < 0) continue;
    const ValueId x = o.operands[1 - at_pv];
    if (x == pv || type(x).shape != type(pv).shape || type(x).dtype != DType::F32 ||
        type(o.results[0]).dtype != DType::F32)
      return;
    // x must be computable before the mma is issued: not depending on P V.
    if (pv_dep_[x]) return;
    out_add_ = &o;
    out_base_ = x;
    return;
  }
}

void AttentionLowering::find_store_cast() {
  for (const ir::Op& o : f().body.ops) {
    if (o.kind != OpKind::Store || o.operands.empty()) continue;
    const DType out = f().params.at(static_cast<size_t>(o.attrs.param)).dtype;
    ValueId v = o.operands[0];
    while (def_[v] && def_[v]->kind == OpKind::Reshape && uses_[v] == 1) v = def_[v]->operands[0];
    const ir::Op* cast = def_[v];
    if (cast && cast->kind == OpKind::Cast && uses_[v] == 1 &&
        (out == DType::F16 || out == DType::BF16) && type(v).dtype == out &&
        type(cast->operands[0]).dtype == DType::F32)
      store_cast_ = cast;
  }
}

// exp(a - b) as ex2(a * log2e - b * log2e): one FFMA per element instead of a subtract and a
// multiply (b is a row's value, its product computed once per row). Numerics::fast only, where
// exp is ex2.approx already; the results differ by the rounding of a * log2e.
bool AttentionLowering::exp_of_difference(const ir::Op& op) {
  const ValueId x = op.operands[0], r = op.results[0];
  const ir::Op* sub = def_[x];
  if (!fast_ || !sub || sub->kind != OpKind::Sub || type(r).dtype != DType::F32 ||
      type(x).dtype != DType::F32)
    return false;
  const ValueId a = sub->operands[0], b = sub->operands[1];
  if (type(a).dtype != DType::F32 || type(b).dtype != DType::F32 || kind_[x] == Kind::Uniform ||
      kind_[x] == Kind::None)
    return false;
  for (ValueId v : {a, b})
    if (kind_[v] != Kind::Uniform && kind_[v] != kind_[x]) return false;
  declare(r, kind_[x]);
  // exp(y * c - b) with c the same for every thread (a scale): ex2(y * (c log2e) - b log2e), and
  // the product y * c is left unused.
  const ir::Op* mul = def_[a];
  if (mul && mul->kind == OpKind::Mul && kind_[a] == kind_[x] &&
      type(mul->operands[0]).dtype == DType::F32 && type(mul->operands[1]).dtype == DType::F32) {
    for (size_t u = 0; u < 2; ++u) {
      const ValueId y = mul->operands[1 - u], c = mul->operands[u];
      if (kind_[c] != Kind::Uniform || kind_[y] != kind_[x]) continue;
      e_.unroll();
      line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = tsr_attn_exp_scaled_sub(",
           at(y, "i"), ", ", name(c), ", ", at(b, "i"), ");");
      return true;
    }
  }
  e_.unroll();
  line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = tsr_attn_exp_sub(", at(a, "i"),
       ", ", at(b, "i"), ");");
  return true;
}

// The output tile straight from its fragments: two neighbouring columns a register pair.
void AttentionLowering::store(const ir::Op& op) {
  const ValueId x = op.operands[0];
  const int prm = op.attrs.param;
  const ir::Param& param = f().params.at(static_cast<size_t>(prm));
  const Shape& tile = param.tile_shape;
  const int rank = static_cast<int>(tile.size());
  if (kind_[x] != Kind::Frag || type(x).shape != tile || rank < 2)
    unsupported(op, "a store of a value not in accumulator registers");
  int row_axis = -1;
  for (int a = 0; a + 1 < rank; ++a)
    if (tile[static_cast<size_t>(a)] != 1) row_axis = a;
  if (row_axis < 0 || tile[static_cast<size_t>(row_axis)] != a_.bm)
    unsupported(op, "a store whose tile is not [.., BM, .., N]");
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + e_.op_text(op)));
  const std::string t = e_.param_var(prm);
  const std::string st = storage_type(param.dtype);
  open("");
  // The tile's first element along each axis, and whether the tile lies in the tensor there.
  std::string base = "0LL", inside = "true";
  for (int a = 0; a < rank; ++a) {
    const std::string origin =
        "(long long)" + e_.tile_coord(a) + " * " + str(tile[static_cast<size_t>(a)]);
    if (a == row_axis || a == rank - 1) continue;  // added per element below
    base += " + " + origin + " * " + t + ".strides[" + str(a) + "]";
    inside += " && " + origin + " < " + t + ".shape[" + str(a) + "]";
  }
  line("const long long tsr_base = ", base, ";");
  line("const long long tsr_row0 = (long long)", e_.tile_coord(row_axis), " * ", a_.bm, ";");
  line("const long long tsr_col0 = (long long)", e_.tile_coord(rank - 1), " * ", tile.back(), ";");
  line(st, "* const tsr_out = (", st, "*)", t, ".data;");
  const std::string row_ok = inside + " && row < " + t + ".shape[" + str(row_axis) + "]";
  const std::string cols = t + ".shape[" + str(rank - 1) + "]";
  if (param.dtype == DType::F16 || param.dtype == DType::BF16) {
    // A register pair is two neighbouring columns: one 32-bit store of both where the output's
    // rows are contiguous and each pair is 4-byte aligned (the same for the whole tile: the column
    // of a pair's first register is even). Per row of the thread, one pointer and one bounds
    // check; per pair, a constant offset and a compare with the columns left. (Each element's own
    // 64-bit index and bounds checks made the epilogue ~1,800 instructions a thread, twice a key
    // tile's softmax, with the tensor cores idle.)
    const std::string pack = param.dtype == DType::F16 ? "tsr_pack_f16x2" : "tsr_pack_bf16x2";
    open("if (", t, ".strides[", rank - 1, "] == 1 && ((tsr_base | tsr_col0 | ", t, ".strides[",
         row_axis, "]) & 1) == 0 && (reinterpret_cast<unsigned long long>(tsr_out) & 3) == 0)");
    line("const long long tsr_cols = ", cols, " - tsr_col0 - tsr_c0;  // this thread's columns");
    e_.unroll();
    open("for (int h = 0; h < 2; ++h)");
    line("const long long row = tsr_row0 + tsr_r0 + 8 * h;");
    line("if (!(", row_ok, ")) continue;");
    line(st, "* const tsr_at = tsr_out + tsr_base + row * ", t, ".strides[", row_axis,
         "] + tsr_col0 + tsr_c0;");
    // The row's registers: i % 4 is 2h or 2h + 1. A tile whose columns all lie in the tensor (the
    // same for the whole tile) stores without a compare.
    const std::string pair = "*reinterpret_cast<unsigned*>(tsr_at + c) = " + pack + "(" + name(x) +
                             "[i], " + name(x) + "[i + 1]);";
    open("if (tsr_col0 + ", tile.back(), " <= ", cols, ")");
    e_.unroll();
    line("for (int i = 2 * h, c = 0; i < ", regs(x), "; i += 4, c += 8) ", pair);
    close("} else {");
    ++e_.depth_;
    e_.unroll();
    open("for (int i = 2 * h; i < ", regs(x), "; i += 4)");
    line("const int c = (i >> 2) * 8;");
    line("if (c + 1 < tsr_cols) ", pair);
    line("else if (c < tsr_cols) tsr_at[c] = ", to_storage(param.dtype, name(x) + "[i]"), ";");
    close();
    close();
    close();
    close("} else {");
    ++e_.depth_;
  }
  e_.unroll();
  open("for (int i = 0; i < ", regs(x), "; ++i)");
  line("const long long row = tsr_row0 + ", frag_row("i"), ", col = tsr_col0 + ", frag_col("i"),
       ";");
  line("if (", row_ok, " && col < ", cols, ") tsr_out[tsr_base + row * ", t, ".strides[", row_axis,
       "] + col * ", t, ".strides[", rank - 1, "]] = ", to_storage(param.dtype, name(x) + "[i]"),
       ";");
  close();
  if (param.dtype == DType::F16 || param.dtype == DType::BF16) close();
  close();
}

void AttentionLowering::consumer_loop(const ir::Op& op) {
  if (split_stages(op)) return pipelined_loop(op);
  const ir::Block& body = op.regions[0];
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + e_.op_text(op)));
  line("// consumers: S = Q K^T and O += P V by wgmma over each stage the producer filled");
  // The carried values, in the registers their shape says (or uniform).
  for (size_t i = 0; i + 1 < body.args.size(); ++i) {
    const ValueId arg = body.args[i + 1], init = op.operands[3 + i];
    const Kind k =
        e_.layout(arg).kind == LayoutKind::Uniform ? Kind::Uniform : kind_of_shape(type(arg).shape);
    if (k == Kind::None || (k == Kind::Uniform && kind_[init] != Kind::Uniform))
      unsupported(op, "a carried value not held in registers");
    if (k == Kind::Uniform) {
      kind_[arg] = Kind::Uniform;
      line(reg_type(type(arg).dtype), " ", name(arg), " = ", name(init), ";");
    } else {
      if (kind_[init] != Kind::Uniform && kind_[init] != k)
        unsupported(op, "a carried value in two layouts");
      declare(arg, k);
      e_.unroll();
      line("for (int i = 0; i < ", regs(arg), "; ++i) ", name(arg), "[i] = ", at(init, "i"), ";");
    }
  }
  line("tsr_mbar_wait(&tsr_qfull, tsr_qphase);");
  const std::string it = "it_" + name(body.args[0]);
  open("for (long long ", it, " = ", name(op.operands[0]), "; ", it, " < ", name(op.operands[1]),
       "; ++", it, ")");
  kind_[body.args[0]] = Kind::Uniform;
  line("const int ", name(body.args[0]), " = (int)", it, ";");
  line("tsr_mbar_wait(&tsr_full[tsr_stage], tsr_phase);");
  line("const unsigned char* const tsr_sk = tsr_ring + tsr_stage * ", ring().stage_bytes, ";");
  line("const unsigned char* const tsr_sv = tsr_sk + ", buffer_offset(1), ";");
  // The stage goes back to the producer once both of its mmas are done (each waits for its own).
  const ir::Op* last_mma = nullptr;
  for (const ir::Op& o : body.ops)
    if (&o == a_.s_mma || &o == a_.pv_mma) last_mma = &o;
  for (const ir::Op& o : body.ops) {
    this->op(o);
    if (&o == last_mma)
      line("if (lane == 0) tsr_mbar_arrive(&tsr_empty[tsr_stage]);  // K and V are read");
  }
  const ir::Op& yield = body.ops.back();
  // Read every yielded value before any carried one is written (one may be yielded into another).
  for (size_t i = 0; i < yield.operands.size(); ++i) {
    const ValueId y = yield.operands[i], arg = body.args[i + 1];
    if (kind_[arg] == Kind::Uniform) {
      if (kind_[y] != Kind::Uniform) unsupported(op, "a carried value in two layouts");
      line("const ", reg_type(type(arg).dtype), " tsr_next", i, " = ", name(y), ";");
    } else {
      if (kind_[y] != Kind::Uniform && kind_[y] != kind_[arg])
        unsupported(op, "a carried value in two layouts");
      line(reg_type(type(arg).dtype), " tsr_next", i, "[", regs(arg), "];");
      e_.unroll();
      line("for (int i = 0; i < ", regs(arg), "; ++i) tsr_next", i, "[i] = ", at(y, "i"), ";");
    }
  }
  for (size_t i = 0; i < yield.operands.size(); ++i) {
    const ValueId arg = body.args[i + 1];
    if (kind_[arg] == Kind::Uniform) {
      line(name(arg), " = tsr_next", i, ";");
    } else {
      e_.unroll();
      line("for (int i = 0; i < ", regs(arg), "; ++i) ", name(arg), "[i] = tsr_next", i, "[i];");
    }
  }
  line("if (++tsr_stage == ", ring().stages, ") { tsr_stage = 0; tsr_phase ^= 1; }");
  close();
  line("if (lane == 0) tsr_mbar_arrive(&tsr_qempty);  // this tile's Q is read");
  line("tsr_qphase ^= 1;");
  for (size_t i = 0; i < op.results.size(); ++i) {
    kind_[op.results[i]] = kind_[body.args[i + 1]];
    e_.alias(op.results[i], name(body.args[i + 1]));
  }
}

// An if of the body (the matcher let only elementwise work in): a uniform condition, so the
// branch is the same for the whole block; its results in the registers their shape says.
void AttentionLowering::if_op(const ir::Op& op) {
  const ValueId cond = op.operands[0];
  if (kind_[cond] != Kind::Uniform) unsupported(op, "a condition not the same for every thread");
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + e_.op_text(op)));
  const ir::Block& otherwise = op.regions[1];
  for (size_t n = 0; n < op.results.size(); ++n) {
    const ValueId r = op.results[n];
    const Kind k =
        e_.layout(r).kind == LayoutKind::Uniform ? Kind::Uniform : kind_of_shape(type(r).shape);
    if (k == Kind::None) unsupported(op, "a result not held in registers");
    // A value the if reassigns (`s = select(..., s, ...)` under a condition) and no op after it
    // reads: the result takes its registers, so neither branch copies a whole tile.
    if (k != Kind::Uniform && otherwise.ops.size() == 1) {
      const ValueId x = otherwise.ops.back().operands[n];
      int inside = 0;
      for (const ir::Block& b : op.regions)
        ir::walk(b, [&](const ir::Op& o) {
          for (ValueId v : o.operands) inside += v == x;
        });
      if (kind_[x] == k && type(x).shape == type(r).shape && type(x).dtype == type(r).dtype &&
          inside == uses_[x]) {
        kind_[r] = k;
        e_.alias(r, name(x));
        continue;
      }
    }
    if (k == Kind::Uniform) {
      kind_[r] = Kind::Uniform;
      line(reg_type(type(r).dtype), " ", name(r), ";");
    } else {
      declare(r, k);
    }
  }
  const auto region = [&](const ir::Block& b) {
    e_.converted_.emplace_back();
    for (size_t i = 0; i + 1 < b.ops.size(); ++i) this->op(b.ops[i]);
    const ir::Op& yield = b.ops.back();
    for (size_t i = 0; i < yield.operands.size(); ++i) {
      const ValueId y = yield.operands[i], r = op.results[i];
      if (name(r) == name(y)) continue;  // the same registers
      if (kind_[r] == Kind::Uniform) {
        if (kind_[y] != Kind::Uniform) unsupported(op, "a result in two layouts");
        line(name(r), " = ", name(y), ";");
      } else {
        if (kind_[y] != Kind::Uniform && kind_[y] != kind_[r])
          unsupported(op, "a result in two layouts");
        e_.unroll();
        line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = ", at(y, "i"), ";");
      }
    }
    e_.converted_.pop_back();
  };
  open("if (", name(cond), ")");
  region(op.regions[0]);
  close("} else {");
  ++e_.depth_;
  region(op.regions[1]);
  close();
}

// ---- the software-pipelined loop -------------------------------------------------------------
//
// The scores of key tile j + 1 are issued together with the output product of tile j, so the
// tensor cores get both back to back, and with two consumer warpgroups the products are issued in
// turns (FlashAttention-3's ping-pong): one warpgroup's softmax runs while the other's products
// do. The body splits in two sides. The output side (B) is what depends on P V or on a value
// carried through it (the output accumulator); everything else is the scores side (A: S, the
// softmax, the running max and sum). A-pre is A up to the scores' mma (in body order), A-post the
// rest of A; B-pre is the output side that does not depend on P V (the rescale of the
// accumulator), B-post the rest. One trip of the emitted loop, for tile j:
//
//   [j + 1 exists] wait for K_{j+1}
//   [ping-pong] wait for this warpgroup's turn
//   [j + 1 exists] A-pre(j + 1): issue S_{j+1}
//   issue O += P_j V_j                     (P_j packed and O rescaled at the end of the last trip)
//   [ping-pong] the other warpgroup's turn
//   wait for both; release stage j; [j + 1 is the last] release Q; B-post(j); the output side's
//   carried values
//   [j + 1 exists] A-post(j + 1); B-pre(j + 1): rescale O, pack P_{j+1}; the scores side's
//                  carried values
//
// with a prologue that runs A(lo) and B-pre(lo) (and releases Q when lo is the last tile). A never
// reads B; B-post reads only B-post's own values, P V and values from outside the loop (B-pre's and
// A's of tile j are out of scope). (Waiting for S_{j+1} alone and running A-post(j + 1) under P_j
// V_j, FlashAttention-3's intra-warpgroup overlap, needs S, P, O and the softmax's values live at
// once: more than 240 registers, and ptxas then serializes every wgmma.)

// Marks the output side and groups the body; false (the plain loop) when the body does not split.
bool AttentionLowering::split_stages(const ir::Op& loop) {
  const ir::Block& body = loop.regions[0];
  if (!out_add_ || loop.results.size() + 1 != body.args.size()) return false;
  b_side_.assign(f().values.size(), 0);
  b_side_[a_.pv_mma->results[0]] = 1;
  const auto reads = [&](const ir::Op& o, const auto& pred) {
    bool any = false;
    for (ValueId v : o.operands) any = any || pred(v);
    for (const ir::Block& r : o.regions)
      ir::walk(r, [&](const ir::Op& in) {
        for (ValueId v : in.operands) any = any || pred(v);
      });
    return any;
  };
  const ir::Op& yield = body.ops.back();
  for (bool changed = true; changed;) {
    changed = false;
    for (const ir::Op& o : body.ops) {
      if (&o == &yield || o.results.empty() || b_side_[o.results[0]]) continue;
      if (reads(o, [&](ValueId v) { return b_side_[v] != 0; })) {
        for (ValueId r : o.results) b_side_[r] = 1;
        changed = true;
      }
    }
    for (size_t i = 0; i < yield.operands.size(); ++i)
      if (b_side_[yield.operands[i]] && !b_side_[body.args[i + 1]])
        b_side_[body.args[i + 1]] = changed = true;
  }
  const ir::Op* cast = a_.p_cast;
  if (b_side_[a_.s_mma->results[0]] || b_side_[cast->results[0]] ||
      type(cast->operands[0]).dtype != DType::F32 || b_side_[out_add_->results[0]] == 0)
    return false;
  const auto in_body = [&](const ir::Op* d) {
    return d && d >= body.ops.data() && d < body.ops.data() + body.ops.size();
  };
  a_pre_.clear(), a_post_.clear(), b_pre_.clear(), b_post_.clear();
  std::vector<char> b_post_value(f().values.size(), 0);
  b_post_value[a_.pv_mma->results[0]] = 1;
  for (size_t i = 1; i < body.args.size(); ++i) b_post_value[body.args[i]] = b_side_[body.args[i]];
  bool after_s = false, after_pv = false;
  for (const ir::Op& o : body.ops) {
    if (&o == &yield) break;
    if (&o == a_.pv_mma) {
      after_pv = true;
      continue;
    }
    const bool b = !o.results.empty() && b_side_[o.results[0]];
    if (b && !o.regions.empty()) return false;  // an if on the output side
    if (!b) {
      (after_s ? a_post_ : a_pre_).push_back(&o);
    } else if (!pv_dep_[o.results[0]]) {
      b_pre_.push_back(&o);
    } else {
      // B-post's operands: its own values, P V, the output side's carried values, or values
      // defined before the loop.
      if (&o != out_add_ && reads(o, [&](ValueId v) {
            return !b_post_value[v] &&
                   (in_body(def_[v]) || v == body.args[0] ||
                    std::find(body.args.begin(), body.args.end(), v) != body.args.end());
          }))
        return false;
      for (ValueId r : o.results) b_post_value[r] = 1;
      b_post_.push_back(&o);
    }
    if (&o == a_.s_mma) after_s = true;
  }
  // The output side's yields come from B-post (or outside the loop).
  for (size_t i = 0; i < yield.operands.size(); ++i) {
    const ValueId y = yield.operands[i];
    if (b_side_[body.args[i + 1]] && !b_post_value[y] && in_body(def_[y])) return false;
  }
  return after_s && after_pv;
}

void AttentionLowering::emit_ops(const std::vector<const ir::Op*>& ops) {
  for (const ir::Op* o : ops) op(*o);
}

// A value's registers, changed (for the compiler) here: reads of it after a wgmma wait stay
// after the wait, and its registers stay the accumulator's (CUTLASS's warpgroup_fence_operand).
void AttentionLowering::fence_regs(ValueId v) {
  e_.unroll();
  line("for (int i = 0; i < ", regs(v), "; ++i) asm volatile(\"\" : \"+f\"(", name(v),
       "[i])::\"memory\");");
}

// B-pre's part of O = x + P V: x into the accumulator's registers, P packed in pairs.
void AttentionLowering::output_operands(const ir::Op& op) {
  const ValueId r = op.results[0];
  e_.unroll();
  line("for (int i = 0; i < ", regs(r), "; ++i) ", name(r), "[i] = ", at(out_base_, "i"), ";");
  const std::string pv = name(a_.p_cast->operands[0]);
  const std::string pack = a_.operand == DType::BF16 ? "tsr_pack_bf16x2" : "tsr_pack_f16x2";
  e_.unroll();
  line("for (int i = 0; i < ", a_.bn / 4, "; ++i) tsr_pa[i] = ", pack, "(", pv, "[2 * i], ", pv,
       "[2 * i + 1]);");
}

void AttentionLowering::output_issue(const ir::Op& op) {
  const ValueId r = op.results[0];
  line("tsr_wgmma_fence();");
  for (int kk = 0; kk < a_.bn / 16; ++kk)
    line(rs_fn_, "(", name(r), ", tsr_pa[", 4 * kk, "], tsr_pa[", 4 * kk + 1, "], tsr_pa[",
         4 * kk + 2, "], tsr_pa[", 4 * kk + 3, "], tsr_wgmma_desc(tsr_sv + ",
         int64_t{kk} * 16 * 128, ", ", int64_t{a_.bn} * 128, ", 1024, 1));");
  line("tsr_wgmma_commit();");
}

// After a key tile's scores are done: the scores' registers fenced, the softmax (A-post), what
// the output side needs before its product (B-pre), P V's register operands, and the scores
// side's carried values updated. Runs once in the loop's prologue and once a trip after it.
void AttentionLowering::softmax_and_pv_operands(const ir::Op& loop) {
  fence_regs(a_.s_mma->results[0]);
  emit_ops(a_post_);
  emit_ops(b_pre_);
  output_operands(*a_.pv_mma);
  carried_update(loop, false);
}

// The carried values of one side take their yields (all read before any is written).
void AttentionLowering::carried_update(const ir::Op& loop, bool b_side) {
  const ir::Block& body = loop.regions[0];
  const ir::Op& yield = body.ops.back();
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < yield.operands.size(); ++i) {
      const ValueId y = yield.operands[i], arg = body.args[i + 1];
      if ((b_side_[arg] != 0) != b_side || name(arg) == name(y)) continue;
      if (kind_[arg] == Kind::Uniform) {
        if (kind_[y] != Kind::Uniform) unsupported(loop, "a carried value in two layouts");
        if (pass == 0)
          line("const ", reg_type(type(arg).dtype), " tsr_next", i, " = ", name(y), ";");
        else
          line(name(arg), " = tsr_next", i, ";");
      } else {
        if (kind_[y] != Kind::Uniform && kind_[y] != kind_[arg])
          unsupported(loop, "a carried value in two layouts");
        if (pass == 0) line(reg_type(type(arg).dtype), " tsr_next", i, "[", regs(arg), "];");
        e_.unroll();
        if (pass == 0)
          line("for (int i = 0; i < ", regs(arg), "; ++i) tsr_next", i, "[i] = ", at(y, "i"), ";");
        else
          line("for (int i = 0; i < ", regs(arg), "; ++i) ", name(arg), "[i] = tsr_next", i,
               "[i];");
      }
    }
}

void AttentionLowering::pipelined_loop(const ir::Op& op) {
  const ir::Block& body = op.regions[0];
  pipelined_ = true;
  // Two consumer warpgroups take turns at the tensor cores (FlashAttention-3's ping-pong): each
  // issues its products between bar.sync on its own named barrier and bar.arrive on the other's,
  // so one's softmax runs while the other's products do. run() pre-arrives warpgroup 1 once.
  const bool pingpong = a_.consumers() == 2;
  pingpong_ = pingpong_ || pingpong;
  out_fused_ = true;  // output_operands copies the add's other operand into the accumulator
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + e_.op_text(op)));
  line("// consumers, software-pipelined: S of the next key tile is issued with P V of this one",
       pingpong ? "; the two warpgroups issue them in turns" : "");
  // The output's accumulator and P's registers live across trips. The carried value that P V
  // accumulates onto lives in the accumulator itself (no second copy live across the back edge).
  const ValueId acc = a_.pv_mma->results[0];
  declare(acc, Kind::Frag);
  line("unsigned tsr_pa[", a_.bn / 4, "];");
  bool acc_taken = false;
  for (size_t i = 0; i + 1 < body.args.size(); ++i) {
    const ValueId arg = body.args[i + 1], init = op.operands[3 + i];
    const Kind k =
        e_.layout(arg).kind == LayoutKind::Uniform ? Kind::Uniform : kind_of_shape(type(arg).shape);
    if (k == Kind::None || (k == Kind::Uniform && kind_[init] != Kind::Uniform))
      unsupported(op, "a carried value not held in registers");
    if (kind_[init] != Kind::Uniform && kind_[init] != k)
      unsupported(op, "a carried value in two layouts");
    if (!acc_taken && body.ops.back().operands[i] == out_add_->results[0] && k == Kind::Frag &&
        type(arg).shape == type(acc).shape) {
      acc_taken = true;
      kind_[arg] = Kind::Frag;
      e_.alias(arg, name(acc));
      e_.unroll();
      line("for (int i = 0; i < ", regs(acc), "; ++i) ", name(acc), "[i] = ", at(init, "i"), ";");
      continue;
    }
    if (k == Kind::Uniform) {
      kind_[arg] = Kind::Uniform;
      line(reg_type(type(arg).dtype), " ", name(arg), " = ", name(init), ";");
    } else {
      declare(arg, k);
      e_.unroll();
      line("for (int i = 0; i < ", regs(arg), "; ++i) ", name(arg), "[i] = ", at(init, "i"), ";");
    }
  }
  const std::string j = name(body.args[0]);
  kind_[body.args[0]] = Kind::Uniform;
  const std::string lo = name(op.operands[0]), hi = name(op.operands[1]);
  const auto stage_ptrs = [&](const std::string& stage) {
    line("const unsigned char* const tsr_sk = tsr_ring + ", stage, " * ", ring().stage_bytes, ";");
    line("const unsigned char* const tsr_sv = tsr_sk + ", buffer_offset(1), ";");
  };
  line("tsr_mbar_wait(&tsr_qfull, tsr_qphase);");
  // Prologue: A(lo) and B-pre(lo).
  open("if ((long long)", lo, " < (long long)", hi, ")");
  e_.converted_.emplace_back();
  line("const int ", j, " = (int)", lo, ";");
  line("tsr_mbar_wait(&tsr_full[tsr_stage], tsr_phase);");
  stage_ptrs("tsr_stage");
  if (pingpong)
    line("tsr_bar_sync(2 + tsr_wg, 256);  // this warpgroup's turn at the tensor cores");
  emit_ops(a_pre_);
  if (pingpong) line("tsr_attn_bar_arrive(3 - tsr_wg, 256);  // the other's turn");
  line("tsr_wgmma_wait<0>();");
  // Q is read by the scores' mma alone: once the last tile's is done, the producer may copy the
  // next tile's Q over it while this one's last softmax, P V and store run (not after them, which
  // left the tensor cores waiting for Q at the start of every tile).
  line("if (lane == 0 && (long long)", lo, " + 1 >= (long long)", hi,
       ") tsr_mbar_arrive(&tsr_qempty);  // the last S is done: Q is read");
  softmax_and_pv_operands(op);
  e_.converted_.pop_back();
  close();
  const std::string it = "it_" + j;
  open("for (long long ", it, " = ", lo, "; ", it, " < ", hi, "; ++", it, ")");
  e_.converted_.emplace_back();
  line("const bool tsr_more = ", it, " + 1 < ", hi, ";");
  line("const int tsr_nstage = tsr_stage + 1 == ", ring().stages, " ? 0 : tsr_stage + 1;");
  line("const unsigned tsr_nphase = tsr_nstage == 0 ? tsr_phase ^ 1 : tsr_phase;");
  line("const int ", j, " = (int)(", it, " + 1);  // the next key tile's, for A");
  line("const unsigned char* const tsr_sk = tsr_ring + tsr_nstage * ", ring().stage_bytes, ";");
  line("const unsigned char* const tsr_sv = tsr_ring + tsr_stage * ", ring().stage_bytes, " + ",
       buffer_offset(1), ";");
  line("if (tsr_more) tsr_mbar_wait(&tsr_full[tsr_nstage], tsr_nphase);");
  if (pingpong) line("tsr_bar_sync(2 + tsr_wg, 256);");
  // A-pre(j + 1): the scores' mma is issued only when there is a next tile.
  for (const ir::Op* o : a_pre_) {
    if (o != a_.s_mma) {
      this->op(*o);
      continue;
    }
    declare(o->results[0], Kind::Frag);
    open("if (tsr_more)");
    line("tsr_wgmma_fence();");
    for (int kk = 0; kk < a_.dim / 16; ++kk) {
      const int64_t strip = kk * 16 / 64, within = kk * 16 % 64 * 2;
      line(kk == 0 ? ss_fn_ + "_zero" : ss_fn_, "(", name(o->results[0]),
           ", tsr_wgmma_desc(tsr_q + ", strip * a_.bm * 128 + within,
           " + tsr_wg * 8192, 16, 1024, 1), tsr_wgmma_desc(tsr_sk + ", strip * a_.bn * 128 + within,
           ", 16, 1024, 1), ", kk == 0 ? "0" : "1", ");");
    }
    line("tsr_wgmma_commit();");
    close();
  }
  output_issue(*a_.pv_mma);
  if (pingpong) line("tsr_attn_bar_arrive(3 - tsr_wg, 256);");
  // Both products done before the softmax: the other warpgroup's run on the tensor cores
  // meanwhile. (Waiting for S alone and running the softmax under P V needs the accumulators of
  // both, P and the softmax's own values live at once: more than 240 registers, and ptxas then
  // serializes every wgmma.)
  line("tsr_wgmma_wait<0>();");
  fence_regs(a_.pv_mma->results[0]);
  line("if (lane == 0) tsr_mbar_arrive(&tsr_empty[tsr_stage]);  // K and V are read");
  line("if (lane == 0 && ", it, " + 2 == ", hi,
       ") tsr_mbar_arrive(&tsr_qempty);  // the last tile's S is done: Q is read");
  emit_ops(b_post_);
  carried_update(op, true);
  open("if (tsr_more)");
  e_.converted_.emplace_back();
  softmax_and_pv_operands(op);
  e_.converted_.pop_back();
  close();
  line("tsr_stage = tsr_nstage;");
  line("tsr_phase = tsr_nphase;");
  e_.converted_.pop_back();
  close();
  line("if (lane == 0 && !((long long)", lo, " < (long long)", hi,
       ")) tsr_mbar_arrive(&tsr_qempty);  // no key tile: Q is not read");
  line("tsr_qphase ^= 1;");
  for (size_t i = 0; i < op.results.size(); ++i) {
    kind_[op.results[i]] = kind_[body.args[i + 1]];
    e_.alias(op.results[i], name(body.args[i + 1]));
  }
  pipelined_ = false;
}

// ---- the producer ----------------------------------------------------------------------------

// One load's tile, in 64-element strips of `strip_bytes` each, completing on `bar`.
void AttentionLowering::tma(const AttentionLoad& l, const std::string& dst, const std::string& bar,
                            int64_t strip_bytes) {
  const ir::Op& load = *l.load;
  const int rank = static_cast<int>(load.attrs.shape.size());
  // One map per load (not per parameter: two loads of one tensor may box different rows).
  const int map = &l == &a_.q ? 0 : &l == &a_.k ? 1 : 2;
  for (int s = 0; s < a_.strips(); ++s) {
    std::string coords;
    for (int a = rank - 1; a >= 0; --a) {
      coords += ", (int)((long long)" + name(load.operands[static_cast<size_t>(a)]) + " * " +
                str(load.attrs.shape[static_cast<size_t>(a)]) +
                (a == rank - 1 && s > 0 ? " + " + str(64 * s) : "") + ")";
    }
    line("tsr_tma_load_", rank, "d(", dst, " + ", s * strip_bytes, ", &tsr_map", map, ", ", bar,
         coords, ");");
  }
}

void AttentionLowering::producer_block(const ir::Block& b) {
  for (const ir::Op& o : b.ops) {
    if (&o == a_.loop) {
      producer_loop(o);
    } else if (a_.producer_ops.count(&o)) {
      e_.op(o);
    } else if (&o == a_.q.load) {
      line("tsr_mbar_wait(&tsr_qempty, tsr_qphase ^ 1);  // the last tile's Q is read");
      line("tsr_mbar_expect_tx(&tsr_qfull, ", a_.q_bytes(), ");");
      tma(a_.q, "tsr_q", "&tsr_qfull", int64_t{a_.bm} * 128);
    }
  }
  line("tsr_qphase ^= 1;");
}

void AttentionLowering::producer_loop(const ir::Op& op) {
  const ir::Block& body = op.regions[0];
  line("// producer: K and V of each key tile, copied by TMA into the ring");
  const std::string it = "it_" + name(body.args[0]);
  open("for (long long ", it, " = ", name(op.operands[0]), "; ", it, " < ", name(op.operands[1]),
       "; ++", it, ")");
  line("const int ", name(body.args[0]), " = (int)", it, ";");
  for (const ir::Op& o : body.ops)
    if (a_.producer_ops.count(&o)) e_.op(o);
  line("tsr_mbar_wait(&tsr_empty[tsr_stage], tsr_phase ^ 1);");
  line("unsigned char* const tsr_sk = tsr_ring + tsr_stage * ", ring().stage_bytes, ";");
  line("tsr_mbar_expect_tx(&tsr_full[tsr_stage], ", ring().stage_bytes, ");");
  tma(a_.k, "tsr_sk", "&tsr_full[tsr_stage]", int64_t{a_.bn} * 128);
  tma(a_.v, "tsr_sk + " + str(buffer_offset(1)), "&tsr_full[tsr_stage]", int64_t{a_.bn} * 128);
  line("if (++tsr_stage == ", ring().stages, ") { tsr_stage = 0; tsr_phase ^= 1; }");
  close();
}

// ---- the kernel ------------------------------------------------------------------------------

// wgmma m64nNk16 with f32 accumulators: S's (A and B K-major in shared memory) and O's (A in
// registers, B N-major in shared memory).
void AttentionLowering::wgmma_functions() {
  const std::string type = a_.operand == DType::BF16 ? "bf16" : "f16";
  const auto fn = [&](const std::string& fname, int n, bool reg_a, bool zero = false) {
    const int regs = n / 2;
    std::string list, outs;
    for (int i = 0; i < regs; ++i) {
      list += (i ? ", %" : "%") + str(i);
      outs += std::string(i ? ", " : "") + (zero ? "\"=f\"(d[" : "\"+f\"(d[") + str(i) + "])";
    }
    if (reg_a) {
      open("__device__ __forceinline__ void ", fname, "(float (&d)[", regs,
           "], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned long long db)");
      line("asm volatile(");
      line("    \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %", regs + 5, ", 0;\\n\"");
      line("    \"wgmma.mma_async.sync.aligned.m64n", n, "k16.f32.", type, ".", type, " {", list,
           "}, {%", regs, ", %", regs + 1, ", %", regs + 2, ", %", regs + 3, "}, %", regs + 4,
           ", p, 1, 1, 1;\\n}\\n\"");
      line("    : ", outs);
      line("    : \"r\"(a0), \"r\"(a1), \"r\"(a2), \"r\"(a3), \"l\"(db), \"r\"(1));");
    } else {
      // acc = 0: D = A B (the accumulator's registers are not read). The _zero variant always
      // is, and says so to the compiler: its outputs are write-only, so the registers the last
      // tile's softmax wrote are not inputs of the next tile's wgmma (ptxas would serialize).
      open("__device__ __forceinline__ void ", fname, "(float (&d)[", regs,
           "], unsigned long long da, unsigned long long db, int acc)");
      line("asm volatile(");
      line("    \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %", regs + 2, ", 0;\\n\"");
      line("    \"wgmma.mma_async.sync.aligned.m64n", n, "k16.f32.", type, ".", type, " {", list,
           "}, %", regs, ", %", regs + 1, ", p, 1, 1, 0, 0;\\n}\\n\"");
      line("    : ", outs);
      line("    : \"l\"(da), \"l\"(db), \"r\"(acc));");
    }
    close();
  };
  // exp(a - b) for Numerics::fast (exp_of_difference): ex2.approx.ftz of one FFMA.
  open("__device__ __forceinline__ float tsr_attn_exp_sub(float a, float b)");
  line("float y;");
  line("asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(fmaf(a, 1.44269504088896341f, ",
       "-(b * 1.44269504088896341f))));");
  line("return y;");
  close();
  open("__device__ __forceinline__ float tsr_attn_exp_scaled_sub(float a, float c, float b)");
  line("float y;");
  line("asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(fmaf(a, c * 1.44269504088896341f, ",
       "-(b * 1.44269504088896341f))));");
  line("return y;");
  close();
  open("__device__ __forceinline__ void tsr_attn_bar_arrive(int id, int threads)");
  line("asm volatile(\"bar.arrive %0, %1;\" ::\"r\"(id), \"r\"(threads) : \"memory\");");
  close();
  ss_fn_ = "tsr_wgmma_ss_" + type + "_n" + str(a_.bn);
  rs_fn_ = "tsr_wgmma_rs_" + type + "_n" + str(a_.dim);
  fn(ss_fn_, a_.bn, false);
  fn(ss_fn_ + "_zero", a_.bn, false, true);
  fn(rs_fn_, a_.dim, true);
}

// This block's tiles (a persistent grid): row-major over grid.tiles, the last axis fastest.
void AttentionLowering::tile_loop() {
  open("for (long long blk = blockIdx.x; blk < grid.total; blk += gridDim.x)");
  line("long long rest = blk;");
  const int rank = std::max(f().grid_rank, 1);
  for (int d = rank - 1; d >= 0; --d) {
    line("const int ", e_.tile_coord(d), " = (int)(rest % grid.tiles[", d, "]);");
    if (d > 0) line("rest /= grid.tiles[", d, "];");
  }
}

EmittedKernel AttentionLowering::run() {
  const int t = a_.consumer_threads();
  const int64_t limit = smem_limit(e_.spec_.arch);
  const int stages = ring_stages(limit - 1024 - a_.q_bytes(), a_.stage_bytes(), kMaxStages);
  if (stages < 2) return {};
  e_.pipeline(attention_ring(f(), a_, stages));
  wgmma_functions();
  const std::string helpers = e_.out_.str();
  e_.out_.str("");
  e_.barrier_stmt_ = "tsr_bar_sync(1, " + str(t) + ");";
  e_.depth_ = 3;
  try {
    block(f().body);
  } catch (const Unsupported&) {
    return {};
  }
  // The general emitter staged nothing in shared memory (the ring starts at 0).
  if (e_.smem_bytes_ != 0 || e_.uses_barrier_) return {};
  const std::string consumer = e_.out_.str();
  e_.out_.str("");
  e_.depth_ = 4;
  producer_block(f().body);
  const std::string producer = e_.out_.str();
  e_.out_.str("");
  e_.depth_ = 0;

  EmittedKernel k;
  k.entry = "tessera_" + identifier(f().name);
  k.threads = t + 128;
  k.shared_bytes =
      static_cast<size_t>(ring().buffers.at(2).bytes + ring().stages * ring().stage_bytes + 1024);
  k.reports_errors = e_.reports_errors_;
  k.blocks_per_sm = 1;
  for (const AttentionLoad* l : {&a_.q, &a_.k, &a_.v})
    k.tensor_maps.push_back({l->param, 64, l->rows, 128, l->row_axis});

  e_.kernel_banner();
  line("// An attention loop: ", a_.consumers(), " consumer warpgroup(s) (wgmma m64n", a_.bn,
       "k16 for S, m64n", a_.dim, "k16 for O, ", dtype_name(a_.operand),
       ") and one producer warp (TMA); Q ", a_.bm, "x", a_.dim, ", ", ring().stages,
       " stages of K and V ", a_.bn, "x", a_.dim, ".");
  e_.out_ << helpers;
  std::string params = e_.abi_params();
  for (int m = 0; m < 3; ++m)
    params += ", const __grid_constant__ TesseraTensorMap tsr_map" + str(m);
  open("extern \"C\" __global__ void __launch_bounds__(", k.threads, ", 1) ", k.entry, "(", params,
       ")");
  line("#ifdef TESSERA_HOPPER");
  line("extern __shared__ __align__(1024) unsigned char tsr_smem_raw[];");
  line("unsigned char* const tsr_smem = tsr_smem_raw + ((1024 - (tsr_smem_addr(tsr_smem_raw) & ",
       "1023)) & 1023);");
  line("unsigned char* const tsr_q = tsr_smem;");
  line("unsigned char* const tsr_ring = tsr_smem + ", ring().buffers.at(2).bytes, ";");
  line("__shared__ unsigned long long tsr_full[", ring().stages, "], tsr_empty[", ring().stages,
       "], tsr_qfull, tsr_qempty;");
  open("if (threadIdx.x == 0)");
  open("for (int s = 0; s < ", ring().stages, "; ++s)");
  line("tsr_mbar_init(&tsr_full[s], 1);  // the producer's arrive.expect_tx");
  line("tsr_mbar_init(&tsr_empty[s], ", t / 32, ");  // one arrival per consumer warp");
  close();
  line("tsr_mbar_init(&tsr_qfull, 1);");
  line("tsr_mbar_init(&tsr_qempty, ", t / 32, ");");
  line("tsr_mbar_fence_init();");
  close();
  line("__syncthreads();");
  e_.grid_dependency_prologue(k);
  line("int tsr_stage = 0;");
  line("unsigned tsr_phase = 0, tsr_qphase = 0;");
  open("if (threadIdx.x >= ", t, ")");
  line("// The producer warpgroup: one thread issues every copy.");
  if (a_.consumers() > 1) line("tsr_regs_dec<", kProducerRegs, ">();");
  open("if (threadIdx.x == ", t, ")");
  for (int m = 0; m < 3; ++m) line("tsr_tma_prefetch_map(&tsr_map", m, ");");
  tile_loop();
  e_.out_ << producer;
  close();
  close();
  line("return;");
  close();
  if (a_.consumers() > 1) line("tsr_regs_inc<", kConsumerRegs, ">();");
  line("const int tid = threadIdx.x;");
  line("const int lane = tid & 31;");
  line("const int warp = tid >> 5;");
  line("const int tsr_wg = warp >> 2;  // this thread's warpgroup: rows [64 * tsr_wg, + 64)");
  line("const int tsr_r0 = tsr_wg * 64 + (warp & 3) * 16 + (lane >> 2);");
  line("const int tsr_c0 = (lane & 3) * 2;");
  if (pingpong_)
    line("if (tsr_wg == 1) tsr_attn_bar_arrive(2, 256);  // warpgroup 0 takes the first turn");
  tile_loop();
  e_.out_ << consumer;
  close();
  line("#endif");
  close();
  k.source = std::string(abi_source()) + "\n" + std::string(device_runtime_source()) + "\n" +
             e_.out_.str();
  return k;
}

EmittedKernel emit_attention(const ir::Function& f, const KernelSpec& spec, const LayoutPlan& plan,
                             const AttentionPipeline& a) {
  Emitter e(f, spec, plan);
  EmittedKernel k = AttentionLowering(e, a).run();
  if (!k.source.empty()) k.layouts = print_lowered(e.lowered());
  return k;
}

}  // namespace tessera::backend::cuda::detail

// The CUDA code generator's driver: plans layouts, then writes one kernel that follows the
// calling convention of abi.hpp. One CUDA block runs one tile block at a time: blockIdx.x walks
// the tile blocks (row-major over grid.tiles) in steps of gridDim.x, so the host may launch fewer
// blocks than there are tiles.
#include "tessera/backend/cuda/codegen.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>

#include "codegen_emitter.hpp"
#include "codegen_runtime.hpp"
#include "tessera/backend/cuda/abi_source.hpp"
#include "tessera/backend/cuda/load_order.hpp"
#include "tessera/backend/cuda/software_pipeline.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"

namespace tessera::backend::cuda {
namespace detail {

using ir::OpKind;

std::string identifier(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out.empty() ? "k" : out;
}

// The last two components of a path: "examples/add.cpp".
std::string short_path(const char* file) {
  const std::string p = file ? file : "";
  const size_t last = p.rfind('/');
  if (last == std::string::npos || last == 0) return p;
  const size_t before = p.rfind('/', last - 1);
  return before == std::string::npos ? p : p.substr(before + 1);
}

// Printable ASCII only, and never a trailing backslash (which would continue a // comment).
std::string comment_text(const std::string& s) {
  std::string out;
  for (char c : s) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (!out.empty() && out.back() == '\\') out += '.';
  return out;
}

// Dynamic shared memory a block may use on each architecture (the host opts in above 48 KB).
int64_t smem_limit(const Arch& a) {
  if ((a.major == 8 && a.minor == 0) || (a.major == 8 && a.minor == 7)) return 166912;
  if (a.major == 9 || a.major == 10) return 232448;
  return 101376;
}

std::string param_ctype(DType t) {
  return t == DType::Bool ? "bool" : storage_type(t);
}

Emitter::Emitter(const ir::Function& f, const KernelSpec& spec, const LayoutPlan& plan)
    : f_(f),
      spec_(spec),
      plan_(plan),
      lowered_(lower_layouts(f, plan)),
      smem_alloc_(f.name, spec.arch.str(), smem_limit(spec.arch)) {
  verify_lowered(lowered_);
  def_.assign(f.values.size(), nullptr);
  index_ops(f.body);
  name_values();
  ir_text();
  for (size_t i = 0; i < f.params.size(); ++i)
    param_vars_.push_back("p" + str(static_cast<int64_t>(i)) + "_" + identifier(f.params[i].name));
  for (int d = 0; d < std::max(f.grid_rank, 1); ++d) tile_coords_.push_back("tile" + str(d));
  coord_used_.assign(tile_coords_.size(), false);
}

void Emitter::index_ops(const ir::Block& b) {
  std::vector<int> uses(f_.values.size(), 0);
  ir::walk(b, [&](const ir::Op& op) {
    const int index = static_cast<int>(op_index_.size());
    op_index_[&op] = index;
    for (ir::ValueId r : op.results) def_[r] = &op;
    for (ir::ValueId v : op.operands) ++uses[v];
  });
  ir::walk(b, [&](const ir::Op& op) {
    if (op.kind != OpKind::Store) return;
    const ir::ValueId v = op.operands[0];
    const DType t = type(v).dtype;
    if ((t != DType::F16 && t != DType::BF16 && !is_fp8(t)) || uses[v] != 1 || !def_[v]) return;
    const ir::OpClass cls = ir::op_info(def_[v]->kind).cls;
    if (cls == ir::OpClass::Unary || cls == ir::OpClass::UnaryFloat || cls == ir::OpClass::Cast ||
        cls == ir::OpClass::Binary)
      rounded_by_store_.insert(v);
  });
}

// The IR printer numbers values in the order they are defined (results, then a loop's block
// arguments); the kernel's variables use the same numbers, so `v7` is `%7` in the comments and
// in TESSERA_DUMP=ir (for a kernel issue_loads_first reordered, in the comments only: the dump
// shows the IR before the reorder).
void Emitter::name_values() {
  names_.assign(f_.values.size(), "");
  int next = 0;
  ir::walk(f_.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) names_[r] = "v" + str(next++);
    if (op.kind == OpKind::For)
      for (ir::ValueId a : op.regions[0].args) names_[a] = "v" + str(next++);
  });
  for (size_t v = 0; v < names_.size(); ++v)
    if (names_[v].empty()) names_[v] = "unused" + str(static_cast<int64_t>(v));
}

// Each op's line of the printed IR, found by walking the printer's structure: a header line,
// one line per op (more for a print whose text has newlines), "} else {" between regions, "}"
// after them.
void Emitter::ir_text() {
  const std::string text = ir::print(f_);
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  size_t next = 1;
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
    for (const ir::Op& op : b.ops) {
      size_t n = 1;
      if (op.kind == OpKind::Print)
        n += std::count(op.attrs.text.begin(), op.attrs.text.end(), '\n');
      std::string s;
      for (size_t i = 0; i < n && next < lines.size(); ++i) {
        const std::string& l = lines[next++];
        s += (i ? "\\n" : "") + l.substr(std::min(l.find_first_not_of(' '), l.size()));
      }
      op_text_[&op] = s.empty() ? std::string(ir::mnemonic(op.kind)) : s;
      for (size_t r = 0; r < op.regions.size(); ++r) {
        if (r) ++next;
        walk(op.regions[r]);
      }
      if (!op.regions.empty()) ++next;
    }
  };
  walk(f_.body);
}

void Emitter::close(const std::string& tail) {
  --depth_;
  line(tail);
}

std::string Emitter::fresh(const std::string& base) {
  const int n = fresh_[base]++;
  return n == 0 ? base : base + "_" + str(n);
}

void Emitter::declare(const std::string& var, DType t, const Layout& l, const Shape& shape,
                      const std::string& comment) {
  const std::string c = comment.empty() ? "" : "  // " + comment;
  if (l.kind == LayoutKind::Uniform)
    line(reg_type(t), " ", var, ";", c);
  else
    line(reg_type(t), " ", var, "[", registers(l, shape), "];", c);
}

void Emitter::declare(ir::ValueId v, const std::string& init, bool constant) {
  const Layout& l = layout(v);
  TESSERA_INTERNAL_CHECK(l.kind != LayoutKind::Shared);
  if (l.kind == LayoutKind::Uniform && !init.empty())
    line(constant ? "const " : "", reg_type(type(v).dtype), " ", name(v), " = ", init, ";");
  else
    declare(name(v), type(v).dtype, l, type(v).shape,
            l.kind == LayoutKind::Uniform ? "" : to_string(l));
}

std::string Emitter::at(const std::string& var, const Layout& l, const std::string& reg) {
  return l.kind == LayoutKind::Uniform ? var : var + "[" + reg + "]";
}

Emitter::Operand Emitter::operand(const ir::Op& op, size_t i) {
  const ir::ValueId v = op.operands[i];
  const auto conversion = lowered_.converted.find({&op, i});
  if (conversion == lowered_.converted.end()) return {name(v), layout(v)};
  const Layout& to = lowered_.values[conversion->second].layout;
  const std::pair<ir::ValueId, std::string> key{v, to_string(to)};
  for (auto scope = converted_.rbegin(); scope != converted_.rend(); ++scope)
    if (auto it = scope->find(key); it != scope->end()) return {it->second, to};
  const std::string var = convert(v, name(v), layout(v), to);
  converted_.back()[key] = var;
  return {var, to};
}

void Emitter::pipeline(const PipelinedLoop& ring) {
  pipelined_ = software_pipeline(lowered_, ring);
  verify_lowered(pipelined_);
}

std::string Emitter::smem(const std::string& ctype, int64_t offset) {
  uses_smem_ = true;
  return "reinterpret_cast<" + ctype + "*>(tsr_smem + " + str(offset) + ")";
}

int64_t Emitter::smem_buffer(int64_t bytes, const ir::Op& op, const std::string& what) {
  const int64_t offset = smem_alloc_.allocate(what, bytes, op.loc);
  smem_bytes_ = smem_alloc_.high_water();
  return offset;
}

// The tail of a row-wise kernel's body that can run one vector at a time: a store of a
// distributed tile and the elementwise ops and input loads before it that only it uses. Emitted as
// a loop over the thread's vectors, each loading, computing and storing its own, the tail holds one
// vector of what it loads rather than the whole row (a norm's weight row, loaded after the
// reduction: 32 more registers a thread otherwise, spilled under the occupancy bound).
// Returns b.ops.size() when there is no such tail, or it loads nothing.
size_t Emitter::epilogue_start(const ir::Block& b) const {
  if ((plan_.min_blocks == 0 && !plan_.stream_rows) || plan_.pipeline || &b != &f_.body ||
      b.ops.empty())
    return b.ops.size();
  const ir::Op& store = b.ops.back();
  if (store.kind != OpKind::Store || f_.params.at(store.attrs.param).tile_shape.empty() ||
      layout(store.operands[0]).kind != LayoutKind::Distributed)
    return b.ops.size();
  const int64_t n = numel(f_.params.at(store.attrs.param).tile_shape);
  // A value the tail reads in registers: uniform, or distributed over the store's tile, or a
  // reduction's slice of it (read per vector).
  const auto fits = [&](ir::ValueId v) {
    const Layout& l = layout(v);
    return l.kind == LayoutKind::Uniform ||
           (l.kind == LayoutKind::Distributed && numel(type(v).shape) == n) ||
           (l.kind == LayoutKind::Slice && numel(l.parent) == n);
  };
  const auto tail_op = [&](const ir::Op& op) {
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (plan_.convert.count({&op, i}) || !fits(op.operands[i])) return false;
    const ir::OpClass cls = ir::op_info(op.kind).cls;
    if (ir::is_elementwise(cls) || cls == ir::OpClass::Creation || cls == ir::OpClass::Reshape)
      return op.kind != OpKind::Iota &&
             (layout(op.results[0]).kind == LayoutKind::Uniform ||
              (fits(op.results[0]) && layout(op.results[0]).kind == LayoutKind::Distributed));
    if (cls == ir::OpClass::Broadcast) {
      const Layout &from = layout(op.operands[0]), &to = layout(op.results[0]);
      return to.kind == LayoutKind::Uniform ||
             (to.kind == LayoutKind::Distributed && fits(op.results[0]) &&
              (from.kind == LayoutKind::Uniform || from.kind == LayoutKind::Slice ||
               (from.kind == LayoutKind::Distributed &&
                type(op.operands[0]).shape == type(op.results[0]).shape)));
    }
    if (cls == ir::OpClass::Load)
      return f_.params.at(op.attrs.param).kind == ir::ParamKind::In && !op.attrs.shape.empty() &&
             fits(op.results[0]) && layout(op.results[0]).kind == LayoutKind::Distributed;
    return false;
  };
  // The longest such run before the store. Only later ops can use a value, and the store is the
  // body's last op, so nothing outside the tail reads what the tail computes.
  size_t start = b.ops.size() - 1;
  while (start > 0 && tail_op(b.ops[start - 1])) --start;
  bool loads = false;
  for (size_t i = start; i + 1 < b.ops.size(); ++i) loads |= b.ops[i].kind == OpKind::Load;
  return loads || plan_.stream_rows ? start : b.ops.size();
}

// Streamed rows: a distributed value over the row that is computed from input loads by
// elementwise ops is not held; each use recomputes it one vector at a time, re-reading the inputs
// (read-only for the whole launch, so every read sees the same values). Its uses must be the
// epilogue, a reduction of one row per thread group (reduced one vector at a time), or another
// such value; anything else keeps it in registers.
void Emitter::plan_streaming(const ir::Block& b, size_t tail) {
  streamed_.assign(f_.values.size(), false);
  if (tail == b.ops.size()) return;
  const int64_t n = numel(f_.params.at(b.ops.back().attrs.param).tile_shape);
  const int64_t t = threads(), v = vec();
  if (n % (t * v) != 0) return;
  const auto row_operand = [&](ir::ValueId u) {
    const Layout& l = layout(u);
    return l.kind == LayoutKind::Uniform || (l.kind == LayoutKind::Slice && numel(l.parent) == n);
  };
  std::vector<bool> candidate(f_.values.size(), false);
  for (size_t i = 0; i < tail; ++i) {
    const ir::Op& op = b.ops[i];
    if (op.results.size() != 1 || !op.regions.empty()) continue;
    const ir::ValueId r = op.results[0];
    if (layout(r).kind != LayoutKind::Distributed || numel(type(r).shape) != n) continue;
    bool ok = true;
    for (size_t j = 0; j < op.operands.size(); ++j) {
      const ir::ValueId u = op.operands[j];
      ok = ok && !plan_.convert.count({&op, j}) && (row_operand(u) || candidate[u]);
    }
    const ir::OpClass cls = ir::op_info(op.kind).cls;
    if (cls == ir::OpClass::Broadcast)
      ok = ok && layout(op.operands[0]).kind != LayoutKind::Distributed;
    else if (cls == ir::OpClass::Load)
      ok = f_.params.at(op.attrs.param).kind == ir::ParamKind::In && !op.attrs.shape.empty();
    else
      ok = ok && ir::is_elementwise(cls);
    candidate[r] = ok;
  }
  // A reduction that streams: f32 accumulation of sum, max or min into a slice whose row a group
  // of threads holds with each thread's vectors all in that row (one row a thread group).
  const auto streams = [&](const ir::Op& op) {
    if (op.kind != OpKind::ReduceSum && op.kind != OpKind::ReduceMax &&
        op.kind != OpKind::ReduceMin)
      return false;
    const ir::ValueId r = op.results[0];
    if (layout(r).kind != LayoutKind::Slice || acc_type(type(r).dtype) != "float") return false;
    const int64_t row = type(op.operands[0]).shape.back(), g = row / v;
    return g >= t && plan_.vectors(n) == g / t;
  };
  streamed_ = candidate;
  for (bool changed = true; changed;) {
    changed = false;
    const auto refuse_uses = [&](const ir::Op& op, bool allowed) {
      for (ir::ValueId u : op.operands)
        if (streamed_[u] && !allowed) {
          streamed_[u] = false;
          changed = true;
        }
    };
    for (size_t i = 0; i < b.ops.size(); ++i) {
      const ir::Op& op = b.ops[i];
      const bool user_streamed = op.results.size() == 1 && streamed_[op.results[0]];
      refuse_uses(op, i >= tail || user_streamed || streams(op));
      for (const ir::Block& region : op.regions)
        ir::walk(region, [&](const ir::Op& inner) { refuse_uses(inner, false); });
    }
  }
}

// A streamed load that several passes over the row read (each streaming reduction is one, the
// epilogue another) is read from memory by the first and kept in shared memory for the others,
// where it fits beside the kernel's other buffers (limit_stash): a LayerNorm over 65536 bf16
// columns reads its row once instead of three times (mean, variance, output). The stash lives for
// the whole kernel, so a block holds at most one row's worth; 16-byte vectors of 16- or 32-bit
// elements. Measured on an H100 (bench/rowwise, fast, 1024x65536, GB/s, f16 / bf16, re-read at
// each pass -> kept): softmax 2093 / 2093 -> 2258 / 2234, RMSNorm 1829 / 1833 -> 1781 / 1945,
// LayerNorm 977 / 979 -> 1071 / 1065 (bench/results/2026-12-06-s19-gpu.md).
void Emitter::plan_stash(const ir::Block& b, size_t tail) {
  stash_.clear();
  if (!plan_.stash_streamed || streamed_.empty()) return;
  // The streamed loads each pass reads: for each root, its streamed operands' defs, transitively.
  std::map<const ir::Op*, int> passes;
  const auto count_pass = [&](const std::vector<ir::ValueId>& roots) {
    std::set<const ir::Op*> seen;
    std::vector<ir::ValueId> work = roots;
    while (!work.empty()) {
      const ir::ValueId u = work.back();
      work.pop_back();
      if (!streamed(u)) continue;
      const ir::Op* d = def(u);
      if (!seen.insert(d).second) continue;
      if (d->kind == OpKind::Load) ++passes[d];
      work.insert(work.end(), d->operands.begin(), d->operands.end());
    }
  };
  for (size_t i = 0; i < tail; ++i)
    if (ir::op_info(b.ops[i].kind).cls == ir::OpClass::Reduce && streamed(b.ops[i].operands[0]))
      count_pass({b.ops[i].operands[0]});
  std::vector<ir::ValueId> tail_roots;
  for (size_t i = tail; i < b.ops.size(); ++i)
    tail_roots.insert(tail_roots.end(), b.ops[i].operands.begin(), b.ops[i].operands.end());
  count_pass(tail_roots);
  int64_t room = stash_room_;
  for (size_t i = 0; i < tail; ++i) {
    const ir::Op& op = b.ops[i];
    if (op.kind != OpKind::Load || passes[&op] < 2) continue;
    const DType dt = f_.params.at(op.attrs.param).dtype;
    if (dt != DType::F16 && dt != DType::BF16 && dt != DType::F32 && dt != DType::I32) continue;
    const int64_t bytes = numel(op.attrs.shape) * static_cast<int64_t>(dtype_size(dt));
    if (vec() * static_cast<int64_t>(dtype_size(dt)) != 16 || bytes > room) continue;
    room -= bytes;
    stash_[&op] = {smem_alloc_.allocate("a streamed row kept for its later passes", bytes,
                                        std::numeric_limits<int64_t>::max(), op.loc),
                   false};
    smem_bytes_ = smem_alloc_.high_water();
  }
}

void Emitter::materialize(ir::ValueId v) {
  if (!streamed(v)) return;
  for (const auto& [done, old] : remat_names_)
    if (done == v) return;
  const ir::Op& d = *def(v);
  for (ir::ValueId u : d.operands) materialize(u);
  remat_names_.emplace_back(v, names_[v]);
  names_[v] += "_" + str(remat_scope_);
  op(d);
}

void Emitter::end_materialized() {
  for (auto it = remat_names_.rbegin(); it != remat_names_.rend(); ++it)
    names_[it->first] = it->second;
  remat_names_.clear();
  ++remat_scope_;
}

std::string Emitter::register_loop(ir::ValueId v) const {
  if (!vector_only_.empty() && layout(v).kind == LayoutKind::Distributed)
    return "for (int i = " + vector_only_ + " * " + str(vec()) + "; i < (" + vector_only_ + " + " +
           str(vector_group_) + ") * " + str(vec()) + "; ++i)";
  return "for (int i = 0; i < " + str(registers(layout(v), type(v).shape)) + "; ++i)";
}

void Emitter::block(const ir::Block& b) {
  converted_.emplace_back();
  const size_t tail = epilogue_start(b);
  if (plan_.stream_rows && &b == &f_.body) {
    plan_streaming(b, tail);
    plan_stash(b, tail);
  }
  for (size_t i = 0; i < tail; ++i) {
    const ir::Op& o = b.ops[i];
    if (o.results.size() == 1 && streamed(o.results[0])) {
      line("// ",
           comment_text(short_path(o.loc.file) + ":" + str(o.loc.line) + "  " + op_text_[&o]),
           "  (recomputed at each use: the row is streamed)");
      continue;
    }
    op(o);
  }
  if (tail < b.ops.size()) {
    const ir::ValueId stored = b.ops.back().operands[0];
    line("// The epilogue, one vector at a time (Emitter::epilogue_start).");
    const int64_t vectors = plan_.vectors(numel(type(stored).shape));
    const int group =
        vectors_a_step(vectors, plan_.stream_rows ? plan_.stream_group : plan_.epilogue_group);
    unroll();
    open("for (int kv = 0; kv < ", vectors / group, "; ++kv)");
    vector_only_ = group == 1 ? "kv" : "kv * " + str(group);
    vector_group_ = group;
    for (size_t i = tail; i < b.ops.size(); ++i) {
      for (ir::ValueId u : b.ops[i].operands) materialize(u);
      op(b.ops[i]);
    }
    vector_only_.clear();
    vector_group_ = 1;
    end_materialized();
    close();
  }
  converted_.pop_back();
}

void Emitter::op(const ir::Op& op) {
  if (plan_.pipeline) {
    if (&op == plan_.pipeline->loop)
      return plan_.pipeline->target == PipelineTarget::Ampere ? ampere_loop(op)
             : role_ == Role::Producer                        ? producer_loop(op)
                                                              : consumer_loop(op);
    if (role_ == Role::Producer && !plan_.pipeline->producer_ops.count(&op)) return;
    if (hoisted_.count(&op)) return;  // emitted before the loop (consumer_loop)
  }
  smem_alloc_.at(++op_position_);  // the buffers of the ops before this one are dead
  current_op_ = &op;
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + op_text_[&op]));
  // The convert_layout ops the lowered form places before this op, emitted here, before its own
  // code (operand() then finds them made). A loop's initial values are converted as for_op
  // declares its carried variables, one by one.
  if (op.kind != OpKind::For)
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (lowered_.converted.count({&op, i})) (void)operand(op, i);
  switch (op.kind) {
    case OpKind::TileIndex:
    case OpKind::NumTiles:
    case OpKind::ScalarParam:
    case OpKind::Dim:
      return interface_op(op);
    case OpKind::Constant:
      return constant(op);
    case OpKind::Iota:
      return iota(op);
    case OpKind::Neg:
    case OpKind::Exp:
    case OpKind::Log:
    case OpKind::Sqrt:
    case OpKind::Rsqrt:
    case OpKind::Tanh:
    case OpKind::Sin:
    case OpKind::Cos:
    case OpKind::Abs:
    case OpKind::Not:
    case OpKind::Exp2:
    case OpKind::Log2:
    case OpKind::Log1p:
    case OpKind::Expm1:
    case OpKind::Erf:
    case OpKind::Sigmoid:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Trunc:
    case OpKind::IsNan:
    case OpKind::IsInf:
      return unary(op);
    case OpKind::Cast:
      return cast_op(op);
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::And:
    case OpKind::Or:
    case OpKind::CmpEq:
    case OpKind::CmpNe:
    case OpKind::CmpLt:
    case OpKind::CmpLe:
    case OpKind::CmpGt:
    case OpKind::CmpGe:
    case OpKind::Xor:
    case OpKind::Pow:
    case OpKind::Fmod:
    case OpKind::Copysign:
    case OpKind::Rem:
    case OpKind::Shl:
    case OpKind::Shr:
      return binary(op);
    case OpKind::Select:
      return select(op);
    case OpKind::Fma:
    case OpKind::Clamp:
      return ternary(op);
    case OpKind::Broadcast:
      return broadcast(op);
    case OpKind::Reshape:
      return reshape(op);
    case OpKind::Permute:
      return permute(op);
    case OpKind::Slice:
      return slice(op);
    case OpKind::Gather:
      return gather_rows(op);
    case OpKind::Concat:
      return concat(op);
    case OpKind::ReduceSum:
    case OpKind::ReduceMax:
    case OpKind::ReduceMin:
    case OpKind::ReduceProd:
    case OpKind::ReduceAny:
    case OpKind::ReduceAll:
      return reduce(op);
    case OpKind::ArgMax:
    case OpKind::ArgMin:
      return arg_reduce(op);
    case OpKind::CumSum:
    case OpKind::CumProd:
      return scan(op);
    case OpKind::Sort:
    case OpKind::ArgSort:
      return sort(op);
    case OpKind::Mma:
      return mma(op);
    case OpKind::Load:
      return load(op);
    case OpKind::Store:
      return store(op);
    case OpKind::StorePart:
      return store_part(op);
    case OpKind::Accumulate:
      return accumulate(op);
    case OpKind::For:
      return for_loop(op);
    case OpKind::If:
      return if_op(op);
    case OpKind::Print:
      return print(op);
    case OpKind::Prefetch:  // issued in the prologue, before the wait: l2_prefetches()
      return;
    case OpKind::Yield:  // lowered by its parent (for_loop, if_op), never reached here
    case OpKind::LocalLoad:
    case OpKind::LocalStore:
      break;
  }
  fail<InternalError>("internal error (a bug in Tessera): '", ir::mnemonic(op.kind),
                      "' reached the CUDA emitter for kernel '", f_.name, "'");
}

// Programmatic dependent launch. The wait comes before anything reads or writes global memory:
// from then on the grids before this one on the stream are complete and their writes visible, so
// every hazard the stream used to order (read after write, write after read, write after write)
// is ordered still; only parameter reads, index arithmetic and shared-memory setup overlap the
// previous kernel.
// launch_dependents follows the wait at once rather than after the block's last load, because:
// - the next grid is scheduled only once every block of this one has issued it or exited (PTX
//   ISA, griddepcontrol), so in a grid of many waves it fires when the last wave is resident: the
//   next grid's blocks never take a slot one of this grid's blocks still waits for, they only
//   fill slots this grid's last wave leaves empty, and park at their own wait;
// - issued after the wait, not before, it lets at most the next grid in early: that grid's own
//   launch_dependents is held behind its wait, i.e. behind this grid's end, so a chain never
//   piles up parked grids ahead of a running one;
// - the tile kernels' last loads are inside loops (and a persistent grid walks many tiles), so
//   "after the last load" has no single place in the code; the blocks it would delay are the ones
//   whose slots the next grid could use anyway.
// Under TESSERA_PDL=0 neither is emitted: a kernel of the user's launched with the attribute behind
// one of ours then cannot start early either. Measured on an H100 (scripts/ab_pdl.sh): a Qwen3
// decode step's graph 1.633 -> 1.597 ms. The row-wise kernels at 32768x4096 (H100, GB/s, f16:
// softmax / RMSNorm / LayerNorm) without it 2435 / 2274 / 2151, with it 2458 / 2298 / 2165, with
// the trigger after the tile loop instead 2460 / 2291 / 2180 (bench/results/2026-12-05-s15-gpu.md).
void Emitter::grid_dependency_prologue(EmittedKernel& k) {
  // griddepcontrol is sm_90+ (sm_80 launches stay plain); TESSERA_PDL=0 leaves it out.
  if (spec_.arch.major < 9 || !spec_.grid_dependency_control) return;
  k.waits_for_prior_grids = true;
  l2_prefetches();
  line("tsr_wait_prior_grids();  // the kernels before this one on the stream are done");
  line("tsr_launch_dependents();  // the next kernel may start its prologue");
}

// The prefetch ops (ops.def): what a kernel does with its time parked at the wait. Its blocks are
// resident while the last wave of the kernel before it runs, and the weights it is about to
// stream do not depend on that kernel, so thread 0 of each block starts its slice of each
// prefetched In into L2 (tsr_prefetch_l2_share, tessera_memory.cuh) and the whole grid covers the
// tensor once. Only here, i.e. only on sm_90+ with programmatic launch: on sm_80 a kernel starts
// after the one before it has finished, so there is no idle tail to fill, and the block's own
// loads ask for the same lines at once (prefetch.global.L2, one line per instruction, would only
// add instructions ahead of them). Nothing under TESSERA_AB_PREFETCH=0 either.
// Tensors whose span exceeds kL2PrefetchCapBytes are skipped at run time: the H200's L2 is 50 MB,
// and an LM head or an embedding table would only evict what the kernels around it need.
constexpr int64_t kL2PrefetchCapBytes = int64_t{32} << 20;

void Emitter::l2_prefetches() {
  if (!spec_.l2_prefetch) return;
  std::vector<int> params;  // each tensor once, in statement order
  for (const ir::Op& op : f_.body.ops)
    if (op.kind == OpKind::Prefetch &&
        std::find(params.begin(), params.end(), op.attrs.param) == params.end())
      params.push_back(op.attrs.param);
  if (params.empty()) return;
  line("// Before the wait: thread 0 warms L2 with this block's slice of each input the kernel ",
       "reads.");
  for (int p : params) {
    const ir::Param& param = f_.params.at(static_cast<size_t>(p));
    line("tsr_prefetch_l2_share(", param_var(p), ", ", dtype_size(param.dtype), ", ",
         kL2PrefetchCapBytes, "LL);  // prefetch $", comment_text(param.name));
  }
}

void Emitter::kernel_banner() {
  line("// ---- kernel '", comment_text(f_.name), "' (",
       comment_text(short_path(f_.loc.file) + ":" + str(f_.loc.line)), ") for ", spec_.arch.str(),
       " ----");
}

std::string Emitter::abi_params() const {
  std::string params = "TesseraGrid grid";
  for (size_t i = 0; i < f_.params.size(); ++i) {
    const ir::Param& p = f_.params[i];
    params += ", ";
    params +=
        p.kind == ir::ParamKind::Scalar ? param_ctype(p.dtype) : std::string("TesseraTensorRef");
    params += " " + param_vars_[i];
  }
  return params;
}

EmittedKernel Emitter::run() {
  if (plan_.pipeline)
    return plan_.pipeline->target == PipelineTarget::Ampere ? run_pipelined_sm80()
                                                            : run_pipelined();
  // The body first: it tells which shared memory and thread facts the prologue must provide.
  depth_ = 2;
  block(f_.body);
  const std::string body = out_.str();
  out_.str("");
  depth_ = 0;

  EmittedKernel k;
  k.entry = "tessera_" + identifier(f_.name);
  const int split = plan_.blocks_per_tile;
  k.threads = threads() / split;
  k.blocks_per_tile = split;
  k.blocks_per_sm = plan_.blocks_per_sm;
  k.shared_bytes = static_cast<size_t>(smem_bytes_);

  kernel_banner();
  line("// ", threads(), " threads per tile; distributed tiles: thread t holds elements (k*",
       threads(), " + t)*", vec(), " + [0, ", vec(), ").");
  for (const std::string& l : smem_alloc_.plan()) line("// ", l);
  const std::string params = abi_params();
  const std::string min_blocks = plan_.min_blocks > 0 ? ", " + str(plan_.min_blocks) : "";
  open("extern \"C\" __global__ void __launch_bounds__(", k.threads, min_blocks, ") ", k.entry, "(",
       params, ")");
  if (uses_smem_) line("extern __shared__ __align__(16) unsigned char tsr_smem[];");
  grid_dependency_prologue(k);
  if (split == 1) {
    if (uses_lane_) line("const int lane = (int)threadIdx.x & 31;");
    if (uses_warp_) line("const int warp = (int)threadIdx.x >> 5;");
    open("for (long long blk = blockIdx.x; blk < grid.total; blk += gridDim.x)");
    // The thread index is re-derived in each tile from an opaque zero (tsr_zero_of), so NVVM
    // cannot hoist the tile-invariant address arithmetic (a norm's weight row at coordinates
    // {0, 0}: every vector's address, both paths) out of this loop into registers held, or
    // spilled, across the body; the loop runs once per block unless the grid is persistent or
    // larger than the device's, but NVVM hoists all the same. ptxas sm_90a, f16: RMSNorm 8192
    // 79 -> 64 registers; LayerNorm 72 B of spills -> none; over 65536 columns LayerNorm 624 B
    // of spills -> none. H100: LayerNorm 1024x65536 1.91x, RMSNorm 1.42x, the Qwen3 decode step
    // 1.3%, the 8192- and 4096-column rows within 2% (docs/compiler.md).
    line("const int tid = (int)threadIdx.x + (int)tsr_zero_of(blk);");
  } else {
    // Elementwise code: each of the tile's threads works on its own elements only, so its
    // threads may as well live in several blocks.
    line("// Each tile runs as ", split, " blocks of ", k.threads, " threads: block b holds the ",
         "tile's threads [", k.threads, " * (b % ", split, "), ", k.threads, " * (b % ", split,
         " + 1)).");
    open("for (long long vblk = blockIdx.x; vblk < grid.total * ", split, "; vblk += gridDim.x)");
    line("const long long blk = vblk / ", split, ";");
    line("const int tid = (int)(vblk % ", split, ") * ", k.threads, " + (int)threadIdx.x;");
  }
  // This block's tile coordinate: row-major over grid.tiles, the last axis fastest.
  const int rank = f_.grid_rank;
  if (rank > 0 && std::any_of(coord_used_.begin(), coord_used_.end(), [](bool b) { return b; })) {
    // Each axis has fewer than 2^31 tiles (the launcher checks), so coordinates are ints; the
    // block index is divided in 32 bits where the whole grid fits (one division, not a call).
    // The first axis needs no remainder: what is left of blk is below grid.tiles[0].
    for (int d = 0; d < rank; ++d)
      if (coord_used_[static_cast<size_t>(d)])
        line("int ", tile_coords_[static_cast<size_t>(d)], ";");
    const auto decompose = [&](const std::string& type) {
      line(type, " rest = (", type, ")blk;");
      for (int d = rank - 1; d >= 0; --d) {
        const std::string extent = "(" + type + ")grid.tiles[" + str(d) + "]";
        if (coord_used_[static_cast<size_t>(d)])
          line(tile_coords_[static_cast<size_t>(d)], " = (int)(",
               d > 0 ? "rest % " + extent : "rest", ");");
        if (d > 0) line("rest /= ", extent, ";");
      }
    };
    if (rank == 1) {
      line(tile_coords_[0], " = (int)blk;");
    } else {
      open("if (grid.total <= 0xffffffffLL)");
      decompose("unsigned");
      close("} else {");
      ++depth_;
      decompose("long long");
      close();
    }
  }
  out_ << body;
  close();
  close();
  k.reports_errors = reports_errors_;
  // Every load stays where the code issues it (tessera_memory.cuh, tsr_ld_words). For the row-wise
  // kernels that measured on an H200 (bench/rowwise f16, against loads the compiler could hoist):
  // LayerNorm 8192x8192 1733 -> 2255 GB/s, 32768x4096 1941 -> 2839; RMSNorm and softmax within 1%.
  k.source =
      std::string(abi_source()) + "\n" + std::string(device_runtime_source()) + "\n" + out_.str();
  return k;
}

}  // namespace detail

EmittedKernel emit(const ir::Function& f, const KernelSpec& spec) {
  // An attention-shaped loop on sm_90a (attention_pipeline.hpp); the general plan supplies the
  // uniform values' code. A body that lowering does not hold in registers takes the paths below.
  if (const std::optional<AttentionPipeline> a = find_attention_pipeline(f, spec)) {
    EmittedKernel k =
        detail::emit_attention(f, spec, plan_layouts(f, spec, true, /*pipeline=*/false), *a);
    if (!k.source.empty()) return k;
  }
  // The emitter's kernel, with its lowered form as text (TESSERA_DUMP=layouts).
  auto run = [&](detail::Emitter& emitter) {
    EmittedKernel k = emitter.run();
    if (!k.source.empty()) k.layouts = print_lowered(emitter.lowered());
    return k;
  };
  auto run_plan = [&](const LayoutPlan& p) {
    detail::Emitter emitter(f, spec, p);
    return run(emitter);
  };
  const LayoutPlan plan = plan_layouts(f, spec);
  // A kernel planned without an occupancy bound, unpipelined, unstreamed and a block a tile (not a
  // one-pass row-wise kernel: decode attention, its combine, the QK-norm and RoPE with the cache
  // append, linear's loops) issues its independent loads before it waits on any (load_order.hpp),
  // and is planned again in that order. spec.issue_loads_first false (TESSERA_AB_LOAD_ORDER=0)
  // keeps canonical_order's (an A/B switch, to be removed once measured on a GPU).
  // (The plan depends on no op's place, so the new one has no bound either; if it ever did, the
  // kernel keeps its order.) Error reports keep naming ops by their place in f, the IR the host
  // decodes them with.
  // A one-pass row-wise kernel issues its loads first where its plan says so (LayoutPlan::
  // loads_first: LayerNorm's weight and bias rows with its input row, before the reduction).
  // TESSERA_AB_ROWWISE_LOADS_FIRST=1 / 0 (an A/B switch) makes every such kernel / none do so
  // (with TESSERA_AB_ROW_RESIDENT=512, its bound leaves the registers that takes).
  const char* rowwise_ab = std::getenv("TESSERA_AB_ROWWISE_LOADS_FIRST");
  const auto eligible = [&](const LayoutPlan& p) {
    const bool rowwise = rowwise_ab && (*rowwise_ab == '0' || *rowwise_ab == '1')
                             ? *rowwise_ab == '1'
                             : p.loads_first;
    return !p.pipeline && !p.stream_rows && p.blocks_per_tile == 1 &&
           (p.min_blocks == 0 || rowwise);
  };
  if (spec.issue_loads_first && eligible(plan)) {
    ir::Function early = f;
    std::vector<int> origin;
    if (issue_loads_first(early, &origin)) {
      ir::verify_or_throw(early, "issue_loads_first");
      const LayoutPlan replanned = plan_layouts(early, spec);
      if (eligible(replanned) && replanned.min_blocks == plan.min_blocks &&
          replanned.blocks_per_sm == plan.blocks_per_sm) {
        detail::Emitter emitter(early, spec, replanned);
        emitter.report_sites_as(std::move(origin));
        return run(emitter);
      }
    }
  }
  if (plan.pipeline) {
    EmittedKernel k = run_plan(plan);
    if (!k.source.empty()) return k;
    // The epilogue left too little shared memory for two stages: the general lowering.
    return run_plan(plan_layouts(f, spec, true, /*pipeline=*/false));
  }
  detail::Emitter emitter(f, spec, plan);
  if (plan.stream_rows && plan.stash_streamed) {
    // Streamed rows kept in shared memory take what the kernel's other buffers leave, measured by
    // emitting it without them first. Code for a target without the "a" suffix may run on a newer
    // GPU (TESSERA_TARGET_ARCH: sm_80 code on an sm_86, sm_90 code on an sm_120), whose blocks
    // may have 99 KB: the stash stays within that there.
    LayoutPlan unstashed = plan;
    unstashed.stash_streamed = false;
    const int64_t others = static_cast<int64_t>(run_plan(unstashed).shared_bytes);
    const int64_t limit = spec.arch.specific
                              ? detail::smem_limit(spec.arch)
                              : std::min<int64_t>(detail::smem_limit(spec.arch), 101376);
    emitter.limit_stash(limit - (others + 15) / 16 * 16);
  }
  EmittedKernel k = run(emitter);
  // A tile split over blocks needs code whose threads never meet; when the body turned out to
  // share values (a single loaded element broadcast through shared memory, say), the tile takes
  // one block after all.
  if (plan.blocks_per_tile > 1 && emitter.shares_values())
    return run_plan(plan_layouts(f, spec, /*split_tiles=*/false));
  return k;
}

}  // namespace tessera::backend::cuda

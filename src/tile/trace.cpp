#include "tessera/tile/trace.hpp"

#include <algorithm>
#include <optional>

#include "tessera/ir/builder.hpp"

namespace tessera::tile::detail {
namespace {

struct TraceState {
  explicit TraceState(ir::Function& f) : fn(f), builder(f) {}
  ir::Function& fn;
  ir::Builder builder;
  // Where each value was made. An assignment (Tile::operator=, which cannot take a
  // source_location) reports its errors at the line that made the value being assigned, which is
  // the assignment's own line in `acc = mma(a, b, acc)`.
  std::vector<SourceLoc> made_at;

  void note(ir::ValueId v, SourceLoc loc) {
    if (v == ir::Builder::kNone) return;
    if (made_at.size() <= v) made_at.resize(v + 1);
    made_at[v] = loc;
  }
  SourceLoc loc_of(ir::ValueId v) const { return v < made_at.size() ? made_at[v] : SourceLoc{}; }
  std::optional<SourceLoc> numerics_loc;  // where the kernel chose its numerics, if it did
};

thread_local TraceState* g_trace = nullptr;

TraceState& current(SourceLoc loc) {
  if (!g_trace)
    fail_at<KernelError>(loc,
                         "a tile operation ran outside a kernel trace; tile values and tile "
                         "functions exist only inside a TESSERA_KERNEL body");
  return *g_trace;
}

}  // namespace

// ---- Traced ------------------------------------------------------------------------------

Traced::Traced(ir::ValueId v) : value_(v), region_(current({}).builder.current_region()) {}

Traced::Traced(const Traced& other, SourceLoc loc)
    : value_(other.get(loc)), region_(current(loc).builder.current_region()) {}

Traced& Traced::operator=(const Traced& other) {
  if (this != &other) set(other.get({}), {});
  return *this;
}

Traced& Traced::operator=(Traced&& other) {
  if (this != &other) set(other.get({}), {});
  return *this;
}

const ir::Type& Traced::type() const { return current({}).fn.type(value_); }

namespace {
// Gives the object a variable holding its current value; the store goes to the region that owns
// the value, which is open (it encloses the current region) whenever this is reached.
int ensure_var(TraceState& t, ir::ValueId value, int region, int& var, SourceLoc loc) {
  if (var >= 0) return var;
  if (!t.builder.is_open(region))
    fail_at<KernelError>(loc,
                         "a tile value made inside a for_range or if_ body is used after that "
                         "body ended; declare the variable before the body and assign it inside");
  var = static_cast<int>(t.fn.vars.size());
  t.fn.vars.push_back(t.fn.type(value));
  ir::Attrs a;
  a.var = var;
  t.builder.add_to(region, ir::OpKind::LocalStore, {value}, a, loc);
  return var;
}
}  // namespace

ir::ValueId Traced::get(SourceLoc loc) const {
  TraceState& t = current(loc);
  const int here = t.builder.current_region();
  if (region_ == here) return value_;
  ir::Attrs a;
  a.var = ensure_var(t, value_, region_, var_, loc);
  value_ = t.builder.add(ir::OpKind::LocalLoad, {}, a, loc);
  t.note(value_, loc);
  region_ = here;
  return value_;
}

void Traced::set(ir::ValueId v, SourceLoc loc) {
  TraceState& t = current(loc);
  if (!loc.known()) loc = t.loc_of(v);
  const int here = t.builder.current_region();
  if (var_ < 0 && region_ == here) {
    value_ = v;
    return;
  }
  ir::Attrs a;
  a.var = ensure_var(t, value_, region_, var_, loc);
  if (t.fn.type(v) != t.fn.vars[var_])
    fail_at<KernelError>(loc, "assigning a ", ir::to_string(t.fn.type(v)),
                         " tile to a variable that holds ", ir::to_string(t.fn.vars[var_]),
                         " tiles across a for_range or if_ body; a variable that a body "
                         "reassigns keeps its shape and dtype");
  t.builder.add(ir::OpKind::LocalStore, {v}, a, loc);
  value_ = v;
  region_ = here;
}

// ---- emitting ops ------------------------------------------------------------------------

ir::ValueId emit(ir::OpKind kind, std::vector<ir::ValueId> operands, const ir::Attrs& attrs,
                 SourceLoc loc) {
  TraceState& t = current(loc);
  const ir::ValueId v = t.builder.add(kind, std::move(operands), attrs, loc);
  t.note(v, loc);
  return v;
}

ir::ValueId emit_constant(DType dtype, double value, SourceLoc loc) {
  ir::Attrs a;
  a.dtype = dtype;
  a.value = value;
  if (is_int(dtype)) a.exact = ir::integer_constant(a);
  return emit(ir::OpKind::Constant, {}, a, loc);
}

ir::ValueId emit_integer_constant(DType dtype, int64_t value, SourceLoc loc) {
  ir::Attrs a;
  a.dtype = dtype;
  a.value = static_cast<double>(value);
  a.exact = value;
  return emit(ir::OpKind::Constant, {}, a, loc);
}

ir::ValueId emit_broadcast_to(ir::ValueId v, const Shape& shape, SourceLoc loc) {
  ir::Type t = type_of(v);
  if (t.shape == shape) return v;
  if (t.shape.size() > shape.size())
    fail_at<KernelError>(loc, "cannot broadcast a ", ir::to_string(t), " tile to ",
                         to_string(shape), ", which has fewer axes");
  if (t.shape.size() < shape.size()) {
    ir::Attrs r;
    r.shape = Shape(shape.size() - t.shape.size(), 1);
    r.shape.insert(r.shape.end(), t.shape.begin(), t.shape.end());
    v = emit(ir::OpKind::Reshape, {v}, r, loc);
  }
  ir::Attrs b;
  b.shape = shape;
  return emit(ir::OpKind::Broadcast, {v}, b, loc);
}

namespace {
// The shape numpy-style broadcasting gives `values` together (missing leading axes are 1, extent-1
// axes stretch); a KernelError naming the op and the operands when two extents disagree.
Shape broadcast_shape(ir::OpKind kind, const std::vector<ir::ValueId>& values, SourceLoc loc) {
  size_t rank = 0;
  for (ir::ValueId v : values) rank = std::max(rank, type_of(v).shape.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i)
    for (size_t k = 0; k < values.size(); ++k) {
      const Shape& s = type_of(values[k]).shape;
      const int64_t d = i < rank - s.size() ? 1 : s[i - (rank - s.size())];
      if (d != 1 && out[i] != 1 && d != out[i]) {
        std::string operands;
        for (size_t j = 0; j < values.size(); ++j)
          operands += (j == 0 ? "" : j + 1 == values.size() ? " and " : ", ") +
                      ir::to_string(type_of(values[j]));
        fail_at<KernelError>(loc, "'", ir::mnemonic(kind), "' cannot broadcast ", operands,
                             " together: axis ", i, " has extents ", out[i], " and ", d);
      }
      if (d != 1) out[i] = d;
    }
  return out;
}
}  // namespace

ir::ValueId emit_binary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, SourceLoc loc) {
  if (type_of(a).shape != type_of(b).shape) {
    const Shape out = broadcast_shape(kind, {a, b}, loc);
    a = emit_broadcast_to(a, out, loc);
    b = emit_broadcast_to(b, out, loc);
  }
  return emit(kind, {a, b}, {}, loc);
}

ir::ValueId emit_ternary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, ir::ValueId c,
                         SourceLoc loc) {
  const Shape out = broadcast_shape(kind, {a, b, c}, loc);
  a = emit_broadcast_to(a, out, loc);
  b = emit_broadcast_to(b, out, loc);
  c = emit_broadcast_to(c, out, loc);
  return emit(kind, {a, b, c}, {}, loc);
}

ir::ValueId emit_select(ir::ValueId cond, ir::ValueId a, ir::ValueId b, SourceLoc loc) {
  return emit_ternary(ir::OpKind::Select, cond, a, b, loc);
}

void set_numerics(ir::Numerics n, SourceLoc loc) {
  TraceState& t = current(loc);
  if (t.numerics_loc && t.fn.numerics != n)
    fail_at<KernelError>(loc, "kernel '", t.fn.name, "' asks for numerics ", ir::to_string(n),
                         " here, but ", t.numerics_loc->str(), " already set ",
                         ir::to_string(t.fn.numerics),
                         ": a kernel has one numerics policy (it applies to the whole kernel)");
  t.fn.numerics = n;
  t.numerics_loc = loc;
}

const ir::Type& type_of(ir::ValueId v) { return current({}).fn.type(v); }
const ir::Param& param(int index) { return current({}).fn.params.at(index); }
int grid_rank() { return current({}).fn.grid_rank; }

// ---- control flow ------------------------------------------------------------------------

void trace_for(ir::ValueId lb, ir::ValueId ub, ir::ValueId step,
               const std::function<void(ir::ValueId)>& body, SourceLoc loc) {
  ir::Builder& b = current(loc).builder;
  b.open(ir::OpKind::For, {lb, ub, step}, loc);
  b.enter_region(0);
  body(b.induction_variable());
  b.exit_region();
  b.close();
}

void trace_if(ir::ValueId cond, const std::function<void()>& then_body,
              const std::function<void()>& else_body, SourceLoc loc) {
  ir::Builder& b = current(loc).builder;
  b.open(ir::OpKind::If, {cond}, loc);
  b.enter_region(0);
  then_body();
  b.exit_region();
  b.enter_region(1);
  if (else_body) else_body();
  b.exit_region();
  b.close();
}

ir::Function trace(std::string name, std::vector<ir::Param> params, SourceLoc loc,
                   const std::function<void()>& body) {
  TESSERA_INTERNAL_CHECK(g_trace == nullptr, "kernel traces do not nest");
  ir::Function fn;
  fn.name = std::move(name);
  fn.params = std::move(params);
  fn.loc = loc;
  // The grid's rank: the Out partitions' (they define the grid), else what an Accum's launch
  // declared (accumulate(grid)).
  bool from_out = false;
  for (const ir::Param& p : fn.params) {
    if (p.kind == ir::ParamKind::Out && !from_out) {
      fn.grid_rank = p.rank;
      from_out = true;
    }
    if (p.kind == ir::ParamKind::Accum && !from_out && p.grid_rank > 0) fn.grid_rank = p.grid_rank;
  }
  TraceState state(fn);
  g_trace = &state;
  struct Reset {
    ~Reset() { g_trace = nullptr; }
  } reset;
  body();
  return fn;
}

}  // namespace tessera::tile::detail

#include "tessera/tile/params.hpp"

namespace tessera::tile::detail {

ir::ValueId emit_load(int param, std::span<const ir::ValueId> index, const Shape& shape, Pad pad,
                      SourceLoc loc, bool at_element) {
  ir::Attrs a;
  a.param = param;
  a.shape = shape;
  a.padded = pad.padded;
  a.value = pad.value;
  a.at_element = at_element;
  return emit(ir::OpKind::Load, {index.begin(), index.end()}, a, loc);
}

ir::ValueId emit_gather(int param, ir::ValueId rows, std::span<const ir::ValueId> start,
                        const Shape& shape, Pad pad, SourceLoc loc) {
  ir::Attrs a;
  a.param = param;
  a.shape = shape;
  a.padded = pad.padded;
  a.value = pad.value;
  std::vector<ir::ValueId> operands{rows};
  operands.insert(operands.end(), start.begin(), start.end());
  return emit(ir::OpKind::Gather, std::move(operands), a, loc);
}

}  // namespace tessera::tile::detail

// Register layouts in code: loops over the registers of a layout, staging values in shared
// memory, layout conversions, and the shape ops (broadcast, reshape, permute, slice, concat), which
// move elements between threads through shared memory unless the layouts make them free.
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {
namespace {

int64_t reg_bytes(DType t) {
  return is_float(t) && dtype_size(t) < 4 ? 4 : static_cast<int64_t>(dtype_size(t));
}

std::string both(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + " && " + b;
}

const char* suffix(const Layout& l) {
  switch (l.kind) {
    case LayoutKind::Uniform:
      return "u";
    case LayoutKind::Distributed:
      return "d";
    case LayoutKind::Slice:
      return "s";
    case LayoutKind::MmaAcc:
      return "m";
    case LayoutKind::Shared:
      return "sh";
  }
  return "x";
}

}  // namespace

// flat < numel(shape).
std::vector<std::string> indices(const std::string& flat, const Shape& shape) {
  const Shape strides = row_major_strides(shape);
  std::vector<std::string> idx;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string e = "(" + flat + ")";
    if (strides[d] != 1) e += " / " + str(strides[d]);
    if (d != 0 && shape[d] != 1) e = "(" + e + ") % " + str(shape[d]);
    if (shape[d] == 1) e = "0";
    idx.push_back(e);
  }
  return idx;
}

std::string line_start(const std::string& flat, const Shape& rshape, const Shape& strides,
                       size_t axis) {
  const std::vector<std::string> idx = indices(flat, rshape);
  std::string start;
  for (size_t d = 0; d < rshape.size(); ++d) {
    if (d == axis || rshape[d] == 1) continue;
    start += (start.empty() ? "" : " + ") + idx[d] + " * " + str(strides[d]);
  }
  return start.empty() ? "0" : start;
}

void Emitter::for_registers(const Layout& l, const Shape& shape,
                            const std::function<void(const Reg&)>& body) {
  const int64_t t = threads(), v = vec();
  if (l.kind == LayoutKind::Distributed) {
    const int64_t n = numel(shape);
    const std::string valid = n % (t * v) != 0 ? "f < " + str(n) : "";
    unroll();
    open("for (int k = 0; k < ", plan_.vectors(n), "; ++k)");
    if (v > 1) {
      unroll();
      open("for (int e = 0; e < ", v, "; ++e)");
      line("const int f = (k * ", t, " + tid) * ", v, " + e;");
      body({"k * " + str(v) + " + e", "f", valid, ""});
      close();
    } else {
      line("const int f = k * ", t, " + tid;");
      body({"k", "f", valid, ""});
    }
    close();
    return;
  }
  if (l.kind == LayoutKind::Slice) {
    const int64_t n = numel(l.parent), row = l.parent.back();
    unroll();
    open("for (int k = 0; k < ", plan_.vectors(n), "; ++k)");
    line("const int pf = (k * ", t, " + tid) * ", v, ";  // first parent element of this vector");
    body({"k", row == 1 ? "pf" : "pf / " + str(row), n % (t * v) != 0 ? "pf < " + str(n) : "",
          row == 1 ? "" : "pf % " + str(row) + " == 0"});
    close();
    return;
  }
  TESSERA_INTERNAL_CHECK(l.kind == LayoutKind::MmaAcc, "no registers to loop over in layout ",
                         to_string(l));
  const MmaTiling m = plan_.tiling(shape);
  const int per_frag_row = m.frags_n * 4;
  line("{");
  ++depth_;
  line("const int wm = ", warp(), " / ", m.warps_n, ", wn = ", warp(), " % ", m.warps_n, ";");
  unroll();
  open("for (int i = 0; i < ", m.registers(), "; ++i)");
  line("const int row = (wm * ", m.frags_m, " + i / ", per_frag_row, ") * 16 + (", lane(),
       " >> 2) + ((i >> 1) & 1) * 8;");
  line("const int col = (wn * ", m.frags_n, " + (i >> 2) % ", m.frags_n, ") * 8 + (", lane(),
       " & 3) * 2 + (i & 1);");
  const bool padded = m.rows() > m.m || m.cols() > m.n;
  body({"i", "row * " + str(m.n) + " + col",
        padded ? "row < " + str(m.m) + " && col < " + str(m.n) : "", "",
        shape.size() == 2 ? std::vector<std::string>{"row", "col"} : std::vector<std::string>{}});
  close();
  close();
}

void Emitter::stage(const std::string& var, const Layout& l, const Shape& shape,
                    const std::string& dst) {
  if (l.kind == LayoutKind::Uniform) {
    line("for (int i = tid; i < ", numel(shape), "; i += ", threads(), ") ", dst, "[i] = ", var,
         ";");
    return;
  }
  for_registers(l, shape, [&](const Reg& r) {
    const std::string cond = both(r.valid, r.owner);
    line(cond.empty() ? "" : "if (" + cond + ") ", dst, "[", r.flat, "] = ", var, "[", r.reg, "];");
  });
}

std::string Emitter::convert(ir::ValueId v, const std::string& var, const Layout& from,
                             const Layout& to) {
  const ir::Type& t = type(v);
  const std::string out = fresh(var + "_" + suffix(to));
  declare(out, t.dtype, to, t.shape, to_string(from) + " -> " + to_string(to));
  if (from.kind == LayoutKind::Uniform) {
    unroll();
    line("for (int i = 0; i < ", registers(to, t.shape), "; ++i) ", out, "[i] = ", var, ";");
    return out;
  }
  TESSERA_INTERNAL_CHECK(to.kind != LayoutKind::Uniform || numel(t.shape) == 1,
                         "only single elements convert to the uniform layout");
  const std::string rt = reg_type(t.dtype);
  const int64_t smem_at = smem_buffer(numel(t.shape) * reg_bytes(t.dtype), *current_op_,
                                      "converting a " + ir::to_string(t) + " tile from the " +
                                          to_string(from) + " to the " + to_string(to) + " layout");
  line("{");
  ++depth_;
  line(rt, "* s = ", smem(rt, smem_at), ";");
  barrier();
  stage(var, from, t.shape, "s");
  barrier();
  if (to.kind == LayoutKind::Uniform) {
    line(out, " = s[0];");
  } else {
    for_registers(to, t.shape, [&](const Reg& r) {
      line(out, "[", r.reg, "] = ",
           r.valid.empty() ? "s[" + r.flat + "]" : r.valid + " ? s[" + r.flat + "] : (" + rt + ")0",
           ";");
    });
  }
  close();
  // The value is in registers: the op's own staging (or a later conversion) may take the bytes.
  smem_alloc_.release(smem_at);
  return out;
}

// Stages x in shared memory, then reads each element of the (distributed) result from the
// element src(indices of the result) of x.
void Emitter::gather(const ir::Op& op, const Operand& x,
                     const std::function<std::string(const std::vector<std::string>&)>& src) {
  const ir::Type& from = type(op.operands[0]);
  const ir::ValueId r = op.results[0];
  const std::string rt = reg_type(from.dtype);
  const int64_t smem_at = smem_buffer(
      numel(from.shape) * reg_bytes(from.dtype), op,
      "'" + std::string(ir::mnemonic(op.kind)) + "' of a " + ir::to_string(from) + " tile");
  declare(r);
  line("{");
  ++depth_;
  line(rt, "* s = ", smem(rt, smem_at), ";");
  barrier();
  stage(x.var, x.layout, from.shape, "s");
  barrier();
  for_registers(layout(r), type(r).shape, [&](const Reg& g) {
    const std::string read =
        "s[" + src(g.coords.empty() ? indices(g.flat, type(r).shape) : g.coords) + "]";
    line(name(r), "[", g.reg,
         "] = ", g.valid.empty() ? read : g.valid + " ? " + read + " : (" + rt + ")0", ";");
  });
  close();
}

void Emitter::broadcast(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const ir::ValueId r = op.results[0];
  const Shape& from = type(op.operands[0]).shape;
  const Shape& to = type(r).shape;
  if (layout(r) == x.layout && (x.layout.kind == LayoutKind::Uniform || from == to)) {
    alias(r, x.var);
    return;
  }
  const int64_t t = threads(), v = vec();
  // A reduction's slice over this very shape: each register already holds its row's value.
  const bool distributed = layout(r).kind == LayoutKind::Distributed;
  if (distributed && x.layout.kind == LayoutKind::Slice && x.layout.parent == to) {
    declare(r);
    unroll();
    line(register_loop(r), " ", name(r), "[i] = ", x.var, "[i / ", v, "];");
    return;
  }
  // Leading axes added to a distributed tile whose size is a multiple of T*V: each thread
  // already holds the elements it needs, repeating every `period` vectors.
  if (distributed && x.layout.kind == LayoutKind::Distributed) {
    size_t j = to.size();
    while (j > 0 && from[j - 1] == to[j - 1]) --j;
    bool leading = true;
    for (size_t d = 0; d < j; ++d) leading &= from[d] == 1;
    const int64_t n = numel(from);
    if (leading && n % (t * v) == 0) {
      const int64_t period = n / (t * v);
      declare(r);
      unroll();
      line(register_loop(r), " ", name(r), "[i] = ", x.var, "[(i / ", v, ") % ", period, " * ", v,
           " + i % ", v, "];");
      return;
    }
  }
  const Shape strides = row_major_strides(from);
  gather(op, x, [&](const std::vector<std::string>& idx) {
    std::string s;
    for (size_t d = 0; d < idx.size(); ++d)
      if (from[d] != 1) s += (s.empty() ? "" : " + ") + idx[d] + " * " + str(strides[d]);
    return s.empty() ? std::string("0") : s;
  });
}

void Emitter::reshape(const ir::Op& op) {
  // Row-major order is unchanged: a distributed tile keeps its registers (the plan converted any
  // other layout), a uniform one its value.
  alias(op.results[0], operand(op, 0).var);
}

// A permuted load (load_t): the load walks its tile in the tensor's order (vector accesses along
// the contiguous axis, as any load) and lands each element in shared memory at its place in the
// permuted tile, rows padded by one element against bank conflicts on the strided writes; each
// thread then reads its own elements of the result in row-major order.
void Emitter::permuted_load(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  const ir::Op& ld = *def(op.operands[0]);
  const ir::Type& t = type(r);
  const DType dt = t.dtype;
  const Shape& shape = t.shape;
  const int64_t cols = shape.back(), ld_cols = cols + 1, rows = numel(shape) / cols;
  const std::string st = storage_type(dt);
  const int64_t smem_at = smem_buffer(rows * ld_cols * static_cast<int64_t>(dtype_size(dt)), op,
                                      "a transposed load of a " + ir::to_string(t) + " tile");
  declare(r);
  line("{");
  ++depth_;
  line(st, "* s = ", smem(st, smem_at), ";");
  barrier();
  line("// ", op_text(ld), ", landed permuted");
  // Result axis d is source axis perm[d]; the result's row-major index, rows padded.
  Shape rstrides = row_major_strides(shape);
  for (int64_t& s : rstrides) s = s / cols * ld_cols;
  rstrides.back() = 1;
  load_into(
      ld,
      [&](const std::vector<std::string>& idx, const std::string& value) {
        std::string at;
        for (size_t d = 0; d < shape.size(); ++d)
          at += (d ? " + " : "") + idx[static_cast<size_t>(op.attrs.perm[d])] + " * " +
                str(rstrides[d]);
        line("s[", at, "] = ", value, ";");
      },
      true);
  barrier();
  for_registers(layout(r), shape, [&](const Reg& g) {
    const std::string read =
        from_storage(dt, "s[(" + g.flat + ") / " + str(cols) + " * " + str(ld_cols) + " + (" +
                             g.flat + ") % " + str(cols) + "]");
    line(name(r), "[", g.reg,
         "] = ", g.valid.empty() ? read : g.valid + " ? " + read + " : (" + reg_type(dt) + ")0",
         ";");
  });
  close();
}

void Emitter::permute(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const ir::ValueId r = op.results[0];
  if (x.layout.kind == LayoutKind::Shared) {
    permuted_load(op);
    return;
  }
  bool identity = true;
  for (size_t d = 0; d < op.attrs.perm.size(); ++d) identity &= op.attrs.perm[d] == int64_t(d);
  if (x.layout.kind == LayoutKind::Uniform || identity) {
    alias(r, x.var);
    return;
  }
  const Shape strides = row_major_strides(type(op.operands[0]).shape);
  gather(op, x, [&](const std::vector<std::string>& idx) {
    std::string s;
    for (size_t d = 0; d < idx.size(); ++d)
      s += (d ? " + " : "") + idx[d] + " * " + str(strides[static_cast<size_t>(op.attrs.perm[d])]);
    return s;
  });
}

void Emitter::slice(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const ir::ValueId r = op.results[0];
  if (layout(r).kind == LayoutKind::Uniform) {  // every element holds the one value
    alias(r, x.var);
    return;
  }
  const Shape strides = row_major_strides(type(op.operands[0]).shape);
  const auto axis = static_cast<size_t>(op.attrs.axis);
  gather(op, x, [&](const std::vector<std::string>& idx) {
    std::string s;
    for (size_t d = 0; d < idx.size(); ++d) {
      std::string i = idx[d];
      if (d == axis && op.attrs.start != 0) i = "(" + i + " + " + str(op.attrs.start) + ")";
      s += (d ? " + " : "") + i + " * " + str(strides[d]);
    }
    return s;
  });
}

// Each operand is staged in shared memory after the one before it (row-major each); a result
// element reads the operand its index along the axis falls in.
void Emitter::concat(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  const ir::Type& rt_type = type(r);
  const auto axis = static_cast<size_t>(op.attrs.axis);
  const std::string rt = reg_type(rt_type.dtype);
  const int64_t smem_at = smem_buffer(numel(rt_type.shape) * reg_bytes(rt_type.dtype), op,
                                      "'concat' into a " + ir::to_string(rt_type) + " tile");
  declare(r);
  line("{");
  ++depth_;
  line(rt, "* s = ", smem(rt, smem_at), ";");
  barrier();
  int64_t base = 0;
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Operand x = operand(op, i);
    stage(x.var, x.layout, type(op.operands[i]).shape, "(s + " + str(base) + ")");
    base += numel(type(op.operands[i]).shape);
  }
  barrier();
  for_registers(layout(r), rt_type.shape, [&](const Reg& g) {
    const std::vector<std::string> idx = indices(g.flat, rt_type.shape);
    // Nested choices, the later operands outermost: index along the axis >= its first.
    std::string read;
    int64_t first = 0, offset = 0;
    for (size_t i = 0; i < op.operands.size(); ++i) {
      const Shape& shape = type(op.operands[i]).shape;
      const Shape strides = row_major_strides(shape);
      std::string at = str(offset);
      for (size_t d = 0; d < idx.size(); ++d) {
        const std::string e =
            d == axis && first != 0 ? "(" + idx[d] + " - " + str(first) + ")" : idx[d];
        if (shape[d] != 1) at += " + " + e + " * " + str(strides[d]);
      }
      const std::string elem = "s[" + at + "]";
      read =
          i == 0 ? elem : "(" + idx[axis] + " >= " + str(first) + " ? " + elem + " : " + read + ")";
      first += shape[axis];
      offset += numel(shape);
    }
    line(name(r), "[", g.reg,
         "] = ", g.valid.empty() ? read : g.valid + " ? " + read + " : (" + rt + ")0", ";");
  });
  close();
}

}  // namespace tessera::backend::cuda::detail

// The kernel interface (tile_index, num_tiles, scalar_param, dim), structured control flow and
// print. Control flow is uniform across the block (conditions and bounds are uniform values), so
// __syncthreads() may appear anywhere inside it.
#include <cstdio>

#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {

void Emitter::interface_op(const ir::Op& op) {
  const ir::Attrs& a = op.attrs;
  const ir::ValueId r = op.results[0];
  if (op.kind == ir::OpKind::TileIndex) return declare(r, tile_coord(a.axis), true);
  if (op.kind == ir::OpKind::NumTiles)
    return declare(r, "(int)grid.tiles[" + str(a.axis) + "]", true);
  if (op.kind == ir::OpKind::ScalarParam)
    return declare(r, from_storage(f_.params.at(a.param).dtype, param_var(a.param)), true);
  TESSERA_INTERNAL_CHECK(op.kind == ir::OpKind::Dim, "not an interface op");
  declare(r, param_var(a.param) + ".shape[" + str(a.axis) + "]", true);
}

// dst = src, register by register (src already in dst's layout, or uniform).
static void copy(Emitter& e, const std::string& dst, const Layout& l, const Shape& shape,
                 const std::string& src, const Layout& src_layout) {
  if (dst == src) return;
  if (l.kind == LayoutKind::Uniform) {
    e.line(dst, " = ", src, ";");
    return;
  }
  e.unroll();
  e.line("for (int i = 0; i < ", e.registers(l, shape), "; ++i) ", dst,
         "[i] = ", Emitter::at(src, src_layout, "i"), ";");
}

void Emitter::yield_to(const ir::Op& yield, const std::vector<std::string>& targets,
                       const std::vector<Layout>& layouts) {
  std::vector<Operand> src;
  for (size_t i = 0; i < yield.operands.size(); ++i) src.push_back(operand(yield, i));
  // A value yielded into another slot than its own must be read before the slots are written.
  for (size_t i = 0; i < src.size(); ++i)
    for (size_t j = 0; j < targets.size(); ++j)
      if (j != i && src[i].var == targets[j]) {
        const std::string tmp = fresh("carried");
        const ir::Type& t = type(yield.operands[i]);
        declare(tmp, t.dtype, src[i].layout, t.shape);
        copy(*this, tmp, src[i].layout, t.shape, src[i].var, src[i].layout);
        src[i].var = tmp;
        break;
      }
  for (size_t i = 0; i < src.size(); ++i)
    copy(*this, targets[i], layouts[i], type(yield.operands[i]).shape, src[i].var, src[i].layout);
}

void Emitter::for_loop(const ir::Op& op) {
  const ir::Block& body = op.regions[0];
  const size_t carried = op.results.size();
  std::vector<std::string> vars;
  std::vector<Layout> layouts;
  for (size_t i = 0; i < carried; ++i) {
    const ir::ValueId arg = body.args[i + 1];
    declare(arg);
    const Operand init = operand(op, 3 + i);
    copy(*this, name(arg), layout(arg), type(arg).shape, init.var, init.layout);
    vars.push_back(name(arg));
    layouts.push_back(layout(arg));
  }
  const std::string lb = name(op.operands[0]), ub = name(op.operands[1]),
                    step = name(op.operands[2]);
  const std::string it = "it_" + name(body.args[0]);
  // The CPU backend rejects a step that is not positive; here it is reported and the loop skipped.
  // A positive constant step (the usual case) needs no check, and leaves the kernel without one.
  const ir::Op* step_def = def(op.operands[2]);
  if (!step_def || step_def->kind != ir::OpKind::Constant || !(step_def->attrs.value > 0))
    line("if (", step, " <= 0) tsr_report(", report_site(op), ", 2, ", step, ", 0, 0, blk);");
  open("for (long long ", it, " = ", lb, "; ", step, " > 0 && ", it, " < ", ub, "; ", it,
       " += ", step, ")");
  line("const int ", name(body.args[0]), " = (int)", it, ";");
  converted_.emplace_back();
  for (size_t i = 0; i + 1 < body.ops.size(); ++i) this->op(body.ops[i]);
  line("// yield");
  yield_to(body.ops.back(), vars, layouts);
  converted_.pop_back();
  close();
  for (size_t i = 0; i < carried; ++i) alias(op.results[i], vars[i]);
}

void Emitter::if_op(const ir::Op& op) {
  std::vector<std::string> vars;
  std::vector<Layout> layouts;
  for (ir::ValueId r : op.results) {
    declare(r);
    vars.push_back(name(r));
    layouts.push_back(layout(r));
  }
  const auto region = [&](const ir::Block& b) {
    converted_.emplace_back();
    for (size_t i = 0; i + 1 < b.ops.size(); ++i) this->op(b.ops[i]);
    yield_to(b.ops.back(), vars, layouts);
    converted_.pop_back();
  };
  open("if (", name(op.operands[0]), ")");
  region(op.regions[0]);
  if (op.regions[1].ops.size() > 1 || !op.results.empty()) {
    close("} else {");
    ++depth_;
    region(op.regions[1]);
  }
  close();
}

// One printf per print op, from one thread of the block (every thread holds the same values).
void Emitter::print(const ir::Op& op) {
  std::string fmt, args;
  size_t next = 0;
  const std::string& text = op.attrs.text;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '}' && next < op.operands.size()) {
      const ir::ValueId v = op.operands[next++];
      const DType t = type(v).dtype;
      if (t == DType::Bool) {
        fmt += "%s";
        args += ", " + name(v) + " ? \"true\" : \"false\"";
      } else if (t == DType::I64) {
        fmt += "%lld";
        args += ", (long long)" + name(v);
      } else if (is_int(t)) {
        fmt += "%d";
        args += ", (int)" + name(v);
      } else {
        fmt += "%g";
        args += ", (double)" + name(v);
      }
      ++i;
    } else if (c == '%') {
      fmt += "%%";
    } else if (c == '"' || c == '\\') {
      fmt += std::string("\\") + c;
    } else if (c == '\n') {
      fmt += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned char>(c));
      fmt += buf;
    } else {
      fmt += c;
    }
  }
  line("if (tid == 0) printf(\"", fmt, "\\n\"", args, ");");
}

}  // namespace tessera::backend::cuda::detail

// sort and argsort along one axis, by ranking: the operand is staged in shared memory, each
// thread counts, for each element it holds, the elements of its line that go before it (the
// order's strict comparison, or equal and earlier: a stable sort), and writes the element (sort)
// or its index (argsort) at that rank in a second shared array, from which the result is read.
// An element of a line of n reads n elements: fine for the tiles of a top-k over a few thousand.
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {
namespace {

int64_t staged_size(DType t) {
  return is_float(t) && dtype_size(t) < 4 ? 4 : static_cast<int64_t>(dtype_size(t));
}

}  // namespace

void Emitter::sort(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const ir::ValueId r = op.results[0];
  const DType st = type(op.operands[0]).dtype, rt = type(r).dtype;
  const Shape& shape = type(r).shape;
  const auto axis = static_cast<size_t>(op.attrs.axis);
  const int64_t n = numel(shape), stride = row_major_strides(shape)[axis], extent = shape[axis];
  const std::string what = "a " + std::string(ir::mnemonic(op.kind)) + " of a " +
                           ir::to_string(type(op.operands[0])) + " tile";
  const int64_t at_s = smem_buffer(n * staged_size(st), op, what);
  const int64_t at_o = smem_buffer(n * staged_size(rt), op, what + " (the ranked result)");
  const std::string srt = reg_type(st), rrt = reg_type(rt);
  // u goes before v: NaN counts as the largest value (u != u: u is NaN).
  const std::string before =
      op.attrs.descending ? "(u != u && v == v) || u > v" : "(v != v && u == u) || u < v";
  declare(r);
  line("{");
  ++depth_;
  line(srt, "* s = ", smem(srt, at_s), ";");
  line(rrt, "* o = ", smem(rrt, at_o), ";");
  barrier();
  stage(x.var, x.layout, type(op.operands[0]).shape, "s");
  barrier();
  for_registers(layout(r), shape, [&](const Reg& g) {
    if (g.valid.empty())
      open("");
    else
      open("if (", g.valid, ")");
    std::string pos = "(" + g.flat + ")";
    if (stride != 1) pos += " / " + str(stride);
    if (axis != 0) pos = "(" + pos + ") % " + str(extent);
    line("const int pos = ", pos, ";");
    line("const int b = (", g.flat, ") - pos * ", stride, ";");
    line("const ", srt, " v = s[", g.flat, "];");
    line("int rank = 0;");
    no_unroll();
    open("for (int j = 0; j < ", extent, "; ++j)");
    line("const ", srt, " u = s[b + j * ", stride, "];");
    line("rank += (", before, ") || (j < pos && (u == v || (u != u && v != v)));");
    close();
    line("o[b + rank * ", stride, "] = ", op.kind == ir::OpKind::ArgSort ? "pos" : "v", ";");
    close();
  });
  barrier();
  for_registers(layout(r), shape, [&](const Reg& g) {
    const std::string read = "o[" + g.flat + "]";
    line(name(r), "[", g.reg,
         "] = ", g.valid.empty() ? read : g.valid + " ? " + read + " : (" + rrt + ")0", ";");
  });
  close();
}

}  // namespace tessera::backend::cuda::detail

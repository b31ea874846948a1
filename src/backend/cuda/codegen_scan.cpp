// Index reductions (argmax, argmin) and scans (cumsum, cumprod) along one axis. Both stage the
// operand in shared memory and let each thread compute the result elements it holds by walking
// the axis in order, as the CPU backend does: simply correct for any axis and any extent (a
// scan element i reads i + 1 elements; shuffle-based scans for long rows are a later step).
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {
namespace {

// Bytes an element of dtype t takes in shared memory when staged in its register type (f16 and
// bf16 registers are floats).
int64_t staged_size(DType t) {
  return is_float(t) && dtype_size(t) < 4 ? 4 : static_cast<int64_t>(dtype_size(t));
}

}  // namespace

void Emitter::arg_reduce(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const ir::ValueId r = op.results[0];
  const DType st = type(op.operands[0]).dtype;
  const Shape& shape = type(op.operands[0]).shape;
  const size_t axis = static_cast<size_t>(op.attrs.axis);
  const int64_t smem_at = smem_buffer(numel(shape) * staged_size(st), op,
                                      "an " + std::string(ir::mnemonic(op.kind)) + " of a " +
                                          ir::to_string(type(op.operands[0])) + " tile");
  const std::string srt = reg_type(st);
  declare(r);
  line("{");
  ++depth_;
  line(srt, "* s = ", smem(srt, smem_at), ";");
  barrier();
  stage(x.var, x.layout, shape, "s");
  barrier();
  const Shape& rshape = type(r).shape;
  const Shape strides = row_major_strides(shape);
  // A candidate v at j replaces the best so far only when it is strictly better, so ties keep
  // the first index; a NaN is better than any number, and the first NaN is never replaced.
  const char* better = op.kind == ir::OpKind::ArgMax ? "v > best" : "v < best";
  for_registers(layout(r), rshape, [&](const Reg& g) {
    if (!g.valid.empty()) open("if (", g.valid, ")");
    line("const int b = ", line_start(g.flat, rshape, strides, axis), ";");
    line(srt, " best = s[b];");
    line("int at = 0;");
    no_unroll();
    open("for (int j = 1; j < ", shape[axis], "; ++j)");
    line("const ", srt, " v = s[b + j * ", strides[axis], "];");
    line("if (best == best && (v != v || ", better, ")) {");
    line("  best = v;");
    line("  at = j;");
    line("}");
    close();
    line(name(r), "[", g.reg, "] = at;");
    if (!g.valid.empty()) {
      close("} else {");
      ++depth_;
      line(name(r), "[", g.reg, "] = 0;");
      close();
    }
  });
  close();
}

// Element i of the result folds the elements 0..i (inclusive) or 0..i-1 (exclusive) of its line
// along the axis, in order, in the accumulator type of reductions (f16/bf16 in f32, narrow
// integers in int, wrapping), and is rounded to the dtype once.
void Emitter::scan(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const ir::ValueId r = op.results[0];
  const DType dt = type(r).dtype;
  const Shape& shape = type(r).shape;
  const int64_t axis = op.attrs.axis;
  const int64_t smem_at = smem_buffer(
      numel(shape) * staged_size(dt), op,
      "a " + std::string(ir::mnemonic(op.kind)) + " of a " + ir::to_string(type(r)) + " tile");
  const std::string srt = reg_type(dt), acc = acc_type(dt);
  const bool sum = op.kind == ir::OpKind::CumSum;
  const Shape strides = row_major_strides(shape);
  const int64_t stride = strides[static_cast<size_t>(axis)],
                extent = shape[static_cast<size_t>(axis)];
  declare(r);
  line("{");
  ++depth_;
  line(srt, "* s = ", smem(srt, smem_at), ";");
  barrier();
  stage(x.var, x.layout, shape, "s");
  barrier();
  for_registers(layout(r), shape, [&](const Reg& g) {
    if (!g.valid.empty()) open("if (", g.valid, ")");
    std::string pos = "(" + g.flat + ")";
    if (stride != 1) pos += " / " + str(stride);
    if (axis != 0) pos = "(" + pos + ") % " + str(extent);
    line("const int pos = ", pos, ";");
    line("const int b = (", g.flat, ") - pos * ", stride, ";");
    line(acc, " p = (", acc, ")", sum ? 0 : 1, ";");
    no_unroll();
    line("for (int j = 0; j ",
         op.attrs.exclusive ? "<" : "<=", " pos; ++j) p = ", sum ? "tsr_add" : "tsr_mul", "(p, (",
         acc, ")s[b + j * ", stride, "]);");
    line(name(r), "[", g.reg, "] = ", round_to(dt, "p"), ";");
    if (!g.valid.empty()) {
      close("} else {");
      ++depth_;
      line(name(r), "[", g.reg, "] = (", srt, ")0;");
      close();
    }
  });
  close();
}

}  // namespace tessera::backend::cuda::detail

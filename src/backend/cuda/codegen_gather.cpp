// gather: a tile whose rows are chosen by an index tile. The indices are staged in shared memory
// (any thread's element may need any row's index); then each register reads its element from
// global memory by itself, at (rows[i], start + j, ...). Every element is bounds-checked, so an
// index outside the tensor never reads outside it: the element reads the pad, and a row index
// outside is reported (kind 3), like an unpadded load's element (kind 1).
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {

void Emitter::gather_rows(const ir::Op& op) {
  const ir::Attrs& a = op.attrs;
  const ir::ValueId r = op.results[0];
  const Shape& shape = a.shape;
  const size_t rank = shape.size();
  const DType dt = f_.params.at(a.param).dtype;
  const std::string ref = param_var(a.param), s = storage_type(dt), it = reg_type(DType::I32);
  const std::string pad = cast_literal(dt, a.padded ? a.value : 0.0);
  const int site = report_site(op);
  const Operand rows = operand(op, 0);
  const int64_t smem_at = smem_buffer(
      shape[0] * 4, op, "the row indices of a gather of a " + ir::to_string(type(r)) + " tile");
  declare(r);
  line("{");
  ++depth_;
  line(it, "* rows = ", smem(it, smem_at), ";");
  barrier();
  stage(rows.var, rows.layout, Shape{shape[0]}, "rows");
  barrier();
  line("const ", s, "* base = (const ", s, "*)", ref, ".data;");
  for (size_t d = 1; d < rank; ++d)
    line("const long long o", d, " = (long long)", name(op.operands[d]), ";");
  const auto dim = [&](const char* field, size_t d) {
    return ref + "." + field + "[" + str(static_cast<int64_t>(d)) + "]";
  };
  for_registers(layout(r), shape, [&](const Reg& g) {
    const std::vector<std::string> idx = indices(g.flat, shape);
    const std::string dst = name(r) + "[" + g.reg + "]";
    // Registers past the tile's end (a ragged last vector) hold the pad and read no index.
    if (g.valid.empty())
      open("");
    else
      open("if (", g.valid, ")");
    line("const long long g0 = rows[", idx[0], "];");
    std::string in = "g0 >= 0 && g0 < " + dim("shape", 0), off = "g0 * " + dim("strides", 0);
    std::string bounds_args = ", g0, " + dim("shape", 0);
    for (size_t d = 1; d < rank; ++d) {
      const std::string gd = "g" + str(static_cast<int64_t>(d));
      line("const long long ", gd, " = o", d, " + ", idx[d], ";");
      in += " && " + gd + " >= 0 && " + gd + " < " + dim("shape", d);
      const bool unit = d == rank - 1 && spec(a.param).inner_unit_stride;
      off += " + " + (unit ? gd : gd + " * " + dim("strides", d));
      bounds_args += ", " + gd + ", " + dim("shape", d);
    }
    line("if (g0 < 0 || g0 >= ", dim("shape", 0), ") tsr_report(", site, ", 3, 0, g0, ",
         dim("shape", 0), ", blk);");
    if (!a.padded && rank > 1)
      line("else if (!(", in, ")) tsr_bounds(", site, ", blk", bounds_args, ");");
    line(dst, " = (", in, ") ? ", from_storage(dt, "base[" + off + "]"), " : ", pad, ";");
    if (!g.valid.empty()) {
      close("} else {");
      ++depth_;
      line(dst, " = ", pad, ";");
    }
    close();
  });
  close();
}

}  // namespace tessera::backend::cuda::detail

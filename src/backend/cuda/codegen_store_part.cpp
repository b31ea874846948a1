// store_part: a piece of this block's own output tile, written at an offset within the tile.
// Each thread writes the elements it holds, one element access each (a piece may start anywhere
// within a vector), and only those that lie inside both the block's tile and the tensor: the
// offsets come from the kernel at run time, and the mask is what keeps a block to its own tile.
// A piece may overlap another store to the tile made with another thread mapping, so barriers
// bracket it (the CPU backend's order, last store wins, then holds on the GPU too).
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {

void Emitter::store_part(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const int p = op.attrs.param;
  const ir::Param& param = f_.params.at(p);
  const Shape& tile = param.tile_shape;
  const Shape& part = type(op.operands[0]).shape;
  const std::string ref = param_var(p), s = storage_type(param.dtype);
  barrier("an earlier store to this tile may have used another thread mapping");
  line("{");
  ++depth_;
  line(s, "* base = (", s, "*)", ref, ".data;");
  for (size_t d = 0; d < tile.size(); ++d) {
    // The piece's first element within the tile, and within the tensor.
    line("const long long l", d, " = (long long)", name(op.operands[d + 1]), ";");
    line("const long long o", d, " = (long long)", tile_coord(static_cast<int>(d)), " * ", tile[d],
         " + l", d, ";");
  }
  // A uniform value has no registers of its own: walk the distributed layout's and read it.
  const Layout& walk =
      x.layout.kind == LayoutKind::Uniform ? Layout{LayoutKind::Distributed, {}} : x.layout;
  const Shape strides = row_major_strides(part);
  for_registers(walk, part, [&](const Reg& g) {
    std::string inside = g.valid.empty() ? "" : g.valid + " && ";
    std::string off;
    for (size_t d = 0; d < part.size(); ++d) {
      std::string i = "(" + g.flat + ")";
      if (strides[d] != 1) i += " / " + str(strides[d]);
      if (d != 0) i = "(" + i + ") % " + str(part[d]);
      const std::string ds = str(static_cast<int64_t>(d));
      line("const long long i", d, " = ", i, ";");
      inside += "l" + ds + " + i" + ds + " >= 0 && l" + ds + " + i" + ds + " < " + str(tile[d]) +
                " && o" + ds + " + i" + ds + " < " + ref + ".shape[" + ds + "] && ";
      off += (d ? " + " : "") + std::string("(o") + ds + " + i" + ds + ") * " + ref + ".strides[" +
             ds + "]";
    }
    inside += "true";
    line("if (", inside, ") base[", off,
         "] = ", to_storage(param.dtype, at(x.var, x.layout, g.reg)), ";");
  });
  close();
  barrier("a later store to this tile may use another thread mapping");
}

}  // namespace tessera::backend::cuda::detail

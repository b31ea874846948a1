// accumulate: a tile added into an Accum parameter at a run-time element offset. Every block may
// add anywhere, so each element's add is an atomic read-modify-write (atomicAdd: f32, f64, i32,
// and i64 as its unsigned 64-bit word, which wraps like the CPU backend's sum). Each element of
// the tile is added by exactly one thread: a register that another thread also holds (a slice
// layout's replicas) adds only where it is the owner, since a second add would count it twice.
// Adds commute, so no barrier orders them against other stores or adds.
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {

void Emitter::accumulate(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const int p = op.attrs.param;
  const ir::Param& param = f_.params.at(p);
  const Shape& shape = type(op.operands[0]).shape;
  const std::string ref = param_var(p), s = storage_type(param.dtype);
  line("{");
  ++depth_;
  line(s, "* base = (", s, "*)", ref, ".data;");
  for (size_t d = 0; d < shape.size(); ++d)
    line("const long long o", d, " = (long long)", name(op.operands[d + 1]), ";");
  // A uniform value has no registers of its own: walk the distributed layout's and read it.
  const Layout& walk =
      x.layout.kind == LayoutKind::Uniform ? Layout{LayoutKind::Distributed, {}} : x.layout;
  const Shape strides = row_major_strides(shape);
  for_registers(walk, shape, [&](const Reg& g) {
    std::string inside = g.valid.empty() ? "" : g.valid + " && ";
    if (!g.owner.empty()) inside += "(" + g.owner + ") && ";
    std::string off;
    for (size_t d = 0; d < shape.size(); ++d) {
      std::string i = "(" + g.flat + ")";
      if (strides[d] != 1) i += " / " + str(strides[d]);
      if (d != 0) i = "(" + i + ") % " + str(shape[d]);
      const std::string ds = str(static_cast<int64_t>(d));
      line("const long long i", d, " = ", i, ";");
      inside += "o" + ds + " + i" + ds + " >= 0 && o" + ds + " + i" + ds + " < " + ref + ".shape[" +
                ds + "] && ";
      off += (d ? " + " : "") + std::string("(o") + ds + " + i" + ds + ") * " + ref + ".strides[" +
             ds + "]";
    }
    inside += "true";
    const std::string v = at(x.var, x.layout, g.reg);
    if (param.dtype == DType::I64)
      line("if (", inside, ") atomicAdd((unsigned long long*)&base[", off,
           "], (unsigned long long)(", v, "));");
    else
      line("if (", inside, ") atomicAdd(&base[", off, "], (", s, ")(", v, "));");
  });
  close();
}

}  // namespace tessera::backend::cuda::detail

#include "tessera/ir/ir.hpp"

namespace tessera::ir {

const OpInfo& op_info(OpKind k) {
  static const OpInfo table[] = {
#define TESSERA_OP(E, mnemonic, nops, nres, nreg, cls) {mnemonic, nops, nres, nreg, OpClass::cls},
#include "tessera/ir/ops.def"
#undef TESSERA_OP
  };
  return table[static_cast<size_t>(k)];
}

std::string to_string(const Type& t) {
  std::string s(dtype_name(t.dtype));
  if (!t.is_scalar()) s += tessera::to_string(t.shape);
  return s;
}

std::string_view to_string(ParamKind k) {
  switch (k) {
    case ParamKind::Out: return "out";
    case ParamKind::In: return "in";
    case ParamKind::Scalar: return "scalar";
  }
  return "?";
}

std::string_view to_string(Numerics n) {
  switch (n) {
    case Numerics::exact: return "exact";
    case Numerics::fast: return "fast";
  }
  return "?";
}

}  // namespace tessera::ir

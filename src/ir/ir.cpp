#include "tessera/ir/ir.hpp"

#include <cmath>
#include <limits>

namespace tessera::ir {

int64_t integer_constant(const Attrs& a) {
  if (a.exact) return *a.exact;
  if (std::isnan(a.value)) return 0;
  const double t = std::trunc(a.value);
  if (t >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (t <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(t);
}

const OpInfo& op_info(OpKind k) {
  static const OpInfo table[] = {
#define TESSERA_OP(E, mnemonic, nops, nres, nreg, cls) {mnemonic, nops, nres, nreg, OpClass::cls},
#include "tessera/ir/ops.def"
#undef TESSERA_OP
  };
  return table[static_cast<size_t>(k)];
}

bool is_elementwise(OpClass c) {
  switch (c) {
    case OpClass::Unary:
    case OpClass::UnaryFloat:
    case OpClass::UnaryBool:
    case OpClass::Classify:
    case OpClass::Cast:
    case OpClass::Binary:
    case OpClass::BinaryBool:
    case OpClass::BinaryFloat:
    case OpClass::BinaryInt:
    case OpClass::Compare:
    case OpClass::Select:
    case OpClass::Ternary:
      return true;
    case OpClass::Interface:
    case OpClass::Creation:
    case OpClass::Broadcast:
    case OpClass::Reshape:
    case OpClass::Permute:
    case OpClass::Slice:
    case OpClass::Reduce:
    case OpClass::ArgReduce:
    case OpClass::Scan:
    case OpClass::Mma:
    case OpClass::Load:
    case OpClass::Gather:
    case OpClass::Store:
    case OpClass::Prefetch:
    case OpClass::For:
    case OpClass::If:
    case OpClass::Yield:
    case OpClass::Print:
    case OpClass::Local:
      return false;
  }
  return false;
}

bool is_anchor(OpClass c) {
  switch (c) {
    case OpClass::Store:
    case OpClass::Prefetch:
    case OpClass::Print:
    case OpClass::For:
    case OpClass::If:
    case OpClass::Yield:
    case OpClass::Local:
      return true;
    case OpClass::Interface:
    case OpClass::Creation:
    case OpClass::Unary:
    case OpClass::UnaryFloat:
    case OpClass::UnaryBool:
    case OpClass::Classify:
    case OpClass::Cast:
    case OpClass::Binary:
    case OpClass::BinaryBool:
    case OpClass::BinaryFloat:
    case OpClass::BinaryInt:
    case OpClass::Compare:
    case OpClass::Select:
    case OpClass::Ternary:
    case OpClass::Broadcast:
    case OpClass::Reshape:
    case OpClass::Permute:
    case OpClass::Slice:
    case OpClass::Reduce:
    case OpClass::ArgReduce:
    case OpClass::Scan:
    case OpClass::Mma:
    case OpClass::Load:
    case OpClass::Gather:
      return false;
  }
  return true;
}

std::string to_string(const Type& t) {
  std::string s(dtype_name(t.dtype));
  if (!t.is_scalar()) s += tessera::to_string(t.shape);
  return s;
}

std::string_view to_string(ParamKind k) {
  switch (k) {
    case ParamKind::Out:
      return "out";
    case ParamKind::In:
      return "in";
    case ParamKind::Scalar:
      return "scalar";
    case ParamKind::Accum:
      return "accum";
  }
  return "?";
}

std::string_view to_string(Numerics n) {
  switch (n) {
    case Numerics::exact:
      return "exact";
    case Numerics::fast:
      return "fast";
  }
  return "?";
}

}  // namespace tessera::ir

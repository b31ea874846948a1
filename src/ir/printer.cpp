#include "tessera/ir/printer.hpp"

#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace tessera::ir {
namespace {

class Printer {
 public:
  explicit Printer(const Function& f) : f_(f) {}

  std::string run() {
    os_ << "kernel @" << f_.name << "(";
    for (size_t i = 0; i < f_.params.size(); ++i) {
      const Param& p = f_.params[i];
      os_ << (i ? ", " : "") << "$" << p.name << ": " << to_string(p.kind) << " "
          << dtype_name(p.dtype);
      if (p.kind == ParamKind::Out) os_ << " tile " << tessera::to_string(p.tile_shape);
      else if (p.kind == ParamKind::In || p.kind == ParamKind::Accum) os_ << " rank " << p.rank;
    }
    os_ << ") grid rank " << f_.grid_rank;
    if (f_.numerics != Numerics::exact) os_ << " numerics " << to_string(f_.numerics);
    os_ << " {\n";
    block(f_.body, 1);
    os_ << "}\n";
    return os_.str();
  }

 private:
  std::string name(ValueId v) {
    auto it = names_.find(v);
    if (it == names_.end()) it = names_.emplace(v, names_.size()).first;
    return "%" + std::to_string(it->second);
  }
  std::string list(const std::vector<ValueId>& vs, size_t from = 0) {
    std::string s;
    for (size_t i = from; i < vs.size(); ++i) {
      if (i > from) s += ", ";
      s += name(vs[i]);
    }
    return s;
  }
  static std::string number(double v) {
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    if (std::isnan(v)) return "nan";
    std::ostringstream os;
    os << std::setprecision(std::numeric_limits<double>::max_digits10 - 2) << v;
    return os.str();
  }
  const std::string& param(int i) const { return f_.params.at(i).name; }
  void indent(int depth) { os_ << std::string(2 * depth, ' '); }

  void block(const Block& b, int depth) {
    for (const Op& op : b.ops) this->op(op, depth);
  }

  void op(const Op& op, int depth) {
    indent(depth);
    if (!op.results.empty()) os_ << list(op.results) << " = ";
    os_ << mnemonic(op.kind);
    const Attrs& a = op.attrs;
    switch (op.kind) {
      case OpKind::TileIndex:
      case OpKind::NumTiles:
        os_ << " " << a.axis;
        break;
      case OpKind::ScalarParam:
        os_ << " $" << param(a.param);
        break;
      case OpKind::Dim:
        os_ << " $" << param(a.param) << ", " << a.axis;
        break;
      case OpKind::Constant:
        if (is_int(a.dtype)) os_ << " " << integer_constant(a);
        else os_ << " " << number(a.value);
        break;
      case OpKind::Iota:
        os_ << " axis " << a.axis;
        break;
      case OpKind::Broadcast:
      case OpKind::Reshape:
      case OpKind::Cast:
        os_ << " " << list(op.operands);
        break;
      case OpKind::Permute:
        os_ << " " << list(op.operands) << " " << tessera::to_string(a.perm);
        break;
      case OpKind::Slice:
        os_ << " " << list(op.operands) << " axis " << a.axis << " [" << a.start << ", "
            << a.start + a.length << ")";
        break;
      case OpKind::Concat:
        os_ << " " << list(op.operands) << " axis " << a.axis;
        break;
      case OpKind::ReduceSum:
      case OpKind::ReduceMax:
      case OpKind::ReduceMin:
      case OpKind::ReduceProd:
      case OpKind::ReduceAny:
      case OpKind::ReduceAll:
      case OpKind::ArgMax:
      case OpKind::ArgMin:
        os_ << " " << list(op.operands) << " axis " << a.axis;
        break;
      case OpKind::CumSum:
      case OpKind::CumProd:
        os_ << " " << list(op.operands) << " axis " << a.axis
            << (a.exclusive ? " exclusive" : " inclusive");
        break;
      case OpKind::Sort:
      case OpKind::ArgSort:
        os_ << " " << list(op.operands) << " axis " << a.axis
            << (a.descending ? " descending" : " ascending");
        break;
      case OpKind::Gather:
        os_ << " $" << param(a.param) << " rows " << list(op.operands);
        if (a.padded)
          os_ << " pad " << number(a.value);
        else
          os_ << " unpadded";
        break;
      case OpKind::Load:
        os_ << " $" << param(a.param) << (a.at_element ? " at [" : "[") << list(op.operands)
            << "]";
        if (a.padded) os_ << " pad " << number(a.value);
        else os_ << " unpadded";
        break;
      case OpKind::Store:
        os_ << " $" << param(a.param) << ", " << list(op.operands);
        break;
      case OpKind::StorePart:
        os_ << " $" << param(a.param) << "["
            << list(std::vector<ValueId>(op.operands.begin() + 1, op.operands.end())) << "], "
            << list({op.operands[0]});
        break;
      case OpKind::Accumulate:
        os_ << " $" << param(a.param) << " at ["
            << list(std::vector<ValueId>(op.operands.begin() + 1, op.operands.end())) << "], "
            << list({op.operands[0]});
        break;
      case OpKind::Prefetch:
        os_ << " $" << param(a.param);
        break;
      case OpKind::Print:
        os_ << " \"" << a.text << "\"" << (op.operands.empty() ? "" : ", ") << list(op.operands);
        break;
      case OpKind::LocalLoad:
        os_ << " var" << a.var;
        break;
      case OpKind::LocalStore:
        os_ << " var" << a.var << ", " << list(op.operands);
        break;
      case OpKind::For: {
        const Block& body = op.regions[0];
        os_ << " " << name(body.args[0]) << " = " << list({op.operands[0]}) << " to "
            << list({op.operands[1]}) << " step " << list({op.operands[2]});
        if (op.operands.size() > 3) {
          os_ << " carry(";
          for (size_t i = 3; i < op.operands.size(); ++i)
            os_ << (i > 3 ? ", " : "") << name(body.args[i - 2]) << " = " << name(op.operands[i]);
          os_ << ")";
        }
        region_tail(op, depth);
        return;
      }
      case OpKind::If:
        os_ << " " << list(op.operands);
        region_tail(op, depth);
        return;
      case OpKind::Neg: case OpKind::Exp: case OpKind::Log: case OpKind::Sqrt:
      case OpKind::Rsqrt: case OpKind::Tanh: case OpKind::Sin: case OpKind::Cos:
      case OpKind::Abs: case OpKind::Not: case OpKind::Add: case OpKind::Sub:
      case OpKind::Mul: case OpKind::Div: case OpKind::Max: case OpKind::Min:
      case OpKind::And: case OpKind::Or: case OpKind::CmpEq: case OpKind::CmpNe:
      case OpKind::CmpLt: case OpKind::CmpLe: case OpKind::CmpGt: case OpKind::CmpGe:
      case OpKind::Mma:
        if (!op.operands.empty()) os_ << " " << list(op.operands);
        if (op.attrs.tf32) os_ << " tf32";
        break;
      case OpKind::Select: case OpKind::Yield:
      case OpKind::Exp2: case OpKind::Log2: case OpKind::Log1p: case OpKind::Expm1:
      case OpKind::Erf: case OpKind::Sigmoid: case OpKind::Floor: case OpKind::Ceil:
      case OpKind::Round: case OpKind::Trunc: case OpKind::IsNan: case OpKind::IsInf:
      case OpKind::Xor: case OpKind::Pow: case OpKind::Fmod: case OpKind::Copysign:
      case OpKind::Rem: case OpKind::Shl: case OpKind::Shr: case OpKind::Fma:
      case OpKind::Clamp:
        if (!op.operands.empty()) os_ << " " << list(op.operands);
        break;
    }
    if (op.results.size() == 1) os_ << " : " << to_string(f_.type(op.results[0]));
    os_ << "\n";
  }

  void region_tail(const Op& op, int depth) {
    if (!op.results.empty()) {
      os_ << " -> (";
      for (size_t i = 0; i < op.results.size(); ++i)
        os_ << (i ? ", " : "") << to_string(f_.type(op.results[i]));
      os_ << ")";
    }
    os_ << " {\n";
    for (size_t r = 0; r < op.regions.size(); ++r) {
      if (r) {
        indent(depth);
        os_ << "} else {\n";
      }
      block(op.regions[r], depth + 1);
    }
    indent(depth);
    os_ << "}\n";
  }

  const Function& f_;
  std::ostringstream os_;
  std::unordered_map<ValueId, size_t> names_;
};

}  // namespace

std::string print(const Function& f) { return Printer(f).run(); }

}  // namespace tessera::ir

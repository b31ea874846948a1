#include "tessera/ir/verifier.hpp"

#include "tessera/ir/infer.hpp"
#include "tessera/ir/printer.hpp"

namespace tessera::ir {
namespace {

using detail::cat;

class Verifier {
 public:
  explicit Verifier(const Function& f) : f_(f), defined_(f.values.size(), false) {}

  std::optional<Diagnostic> run() {
    if (!block(f_.body, nullptr)) return diag_;
    return std::nullopt;
  }

 private:
  template <class... Args>
  bool error(const Op& op, Args&&... args) {
    diag_ = Diagnostic{op.loc, cat("'", mnemonic(op.kind), "' ", std::forward<Args>(args)...)};
    return false;
  }

  bool define(const Op& op, ValueId v) {
    if (v >= defined_.size()) return error(op, "defines value %", v, ", which has no type");
    if (defined_[v]) return error(op, "defines value %", v, " a second time");
    defined_[v] = true;
    return true;
  }

  // `parent` is the for/if whose region this is, or null for the function body.
  bool block(const Block& b, const Op* parent) {
    std::vector<ValueId> scope;
    for (ValueId a : b.args) {
      if (a >= defined_.size() || defined_[a]) {
        diag_ = Diagnostic{parent ? parent->loc : f_.loc, "a block argument is defined twice"};
        return false;
      }
      defined_[a] = true;
      scope.push_back(a);
    }
    bool ok = true;
    for (size_t i = 0; ok && i < b.ops.size(); ++i) {
      const Op& op = b.ops[i];
      const bool last = i + 1 == b.ops.size();
      if (op.kind == OpKind::Yield && (!parent || !last)) {
        ok = error(op, "must be the last op of a for or if region");
        break;
      }
      if (op.kind == OpKind::Prefetch && parent) {
        ok = error(op, "must be in the kernel's body, outside loops and branches");
        break;
      }
      ok = this->op(op);
      if (ok)
        for (ValueId r : op.results) scope.push_back(r);
    }
    if (ok && parent && (b.ops.empty() || b.ops.back().kind != OpKind::Yield))
      ok = error(*parent, "region does not end with a yield");
    for (ValueId v : scope) defined_[v] = false;
    return ok;
  }

  bool op(const Op& op) {
    const OpInfo& info = op_info(op.kind);
    if (info.operands >= 0 && static_cast<int>(op.operands.size()) != info.operands)
      return error(op, "has ", op.operands.size(), " operands; it takes ", info.operands);
    if (info.results >= 0 && static_cast<int>(op.results.size()) != info.results)
      return error(op, "has ", op.results.size(), " results; it has ", info.results);
    if (static_cast<int>(op.regions.size()) != info.regions)
      return error(op, "has ", op.regions.size(), " regions; it has ", info.regions);
    for (ValueId v : op.operands)
      if (v >= defined_.size() || !defined_[v])
        return error(op, "uses a value that is not defined before it in an enclosing block");
    if (f_.stage == Stage::Promoted && info.cls == OpClass::Local)
      return error(op, "remains after promote_locals");

    if (op.kind != OpKind::Yield && op.kind != OpKind::If) {
      Inferred inferred = infer_types(f_, op.kind, op.operands, op.attrs);
      if (!inferred.ok()) return error(op, "is ill-typed: ", inferred.error);
      if (inferred.types.size() != op.results.size())
        return error(op, "has ", op.results.size(), " results, but its operands give ",
                     inferred.types.size());
      for (size_t i = 0; i < op.results.size(); ++i)
        if (op.results[i] < f_.values.size() && f_.type(op.results[i]) != inferred.types[i])
          return error(op, "result ", i, " is ", to_string(f_.type(op.results[i])),
                       ", but its operands give ", to_string(inferred.types[i]));
    }
    std::vector<Type> result_types;
    for (ValueId r : op.results) {
      if (r >= f_.values.size()) return error(op, "has a result with no type");
      result_types.push_back(f_.type(r));
    }

    if (op.kind == OpKind::For) {
      const Block& body = op.regions[0];
      if (body.args.size() != op.results.size() + 1)
        return error(op, "body takes ", body.args.size(), " arguments; it needs the induction ",
                     "variable and ", op.results.size(), " carried values");
      if (body.args[0] >= f_.values.size() || f_.type(body.args[0]) != Type{DType::I32, {}})
        return error(op, "induction variable must be an i32 scalar");
      for (size_t i = 0; i < op.results.size(); ++i)
        if (f_.type(body.args[i + 1]) != result_types[i])
          return error(op, "carried value ", i, " is ", to_string(f_.type(body.args[i + 1])),
                       " in the body but ", to_string(result_types[i]), " outside");
    }
    if (op.kind == OpKind::If)
      for (const Block& r : op.regions)
        if (!r.args.empty()) return error(op, "regions take no arguments");

    for (const Block& r : op.regions) {
      if (!block(r, &op)) return false;
      const Op& y = r.ops.back();
      if (y.operands.size() != result_types.size())
        return error(y, "yields ", y.operands.size(), " values to a '", mnemonic(op.kind),
                     "' with ", result_types.size(), " results");
      for (size_t i = 0; i < y.operands.size(); ++i)
        if (f_.type(y.operands[i]) != result_types[i])
          return error(y, "yields ", to_string(f_.type(y.operands[i])), " for result ", i,
                       " of type ", to_string(result_types[i]));
    }
    for (ValueId r : op.results)
      if (!define(op, r)) return false;
    return true;
  }

  const Function& f_;
  std::vector<bool> defined_;
  Diagnostic diag_;
};

}  // namespace

std::optional<Diagnostic> verify(const Function& f) { return Verifier(f).run(); }

void verify_or_throw(const Function& f, std::string_view after) {
  if (auto d = verify(f))
    fail<InternalError>("internal error (a bug in Tessera): the IR of kernel '", f.name,
                        "' is invalid after ", after, ": ", detail::located(d->loc, d->message),
                        "\n", print(f));
}

}  // namespace tessera::ir

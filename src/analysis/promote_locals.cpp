#include "tessera/analysis/promote_locals.hpp"

#include <algorithm>
#include <unordered_map>

namespace tessera::analysis {
namespace {

constexpr ir::ValueId kUnset = ~ir::ValueId{0};

// The variables an op's regions assign that already hold a value before the op: those become its
// carried values or results. A variable first stored inside the regions is local to them.
// They come in the order of their first assignment inside the regions, which is statement order
// in the kernel, not in the order of the variables' numbers: a variable is numbered when C++
// first reads it inside a body, and `acc1 + acc2` reads its operands in an order that differs
// between compilers.
std::vector<int> vars_stored_in(const ir::Op& op, const std::vector<ir::ValueId>& current) {
  std::vector<int> vars;
  for (const ir::Block& r : op.regions)
    ir::walk(r, [&](const ir::Op& o) {
      if (o.kind == ir::OpKind::LocalStore && current[o.attrs.var] != kUnset &&
          std::find(vars.begin(), vars.end(), o.attrs.var) == vars.end())
        vars.push_back(o.attrs.var);
    });
  return vars;
}

class Promoter {
 public:
  explicit Promoter(ir::Function& f) : f_(f), current_(f.vars.size(), kUnset) {}

  void run() { block(f_.body); }

 private:
  ir::ValueId resolve(ir::ValueId v) const {
    auto it = replaced_.find(v);
    return it == replaced_.end() ? v : it->second;
  }

  void block(ir::Block& b) {
    std::vector<ir::Op> kept;
    kept.reserve(b.ops.size());
    for (ir::Op& op : b.ops) {
      for (ir::ValueId& v : op.operands) v = resolve(v);
      if (op.kind == ir::OpKind::LocalStore) {
        current_[op.attrs.var] = op.operands[0];
        continue;
      }
      if (op.kind == ir::OpKind::LocalLoad) {
        const ir::ValueId v = current_[op.attrs.var];
        TESSERA_INTERNAL_CHECK(v != kUnset, "variable loaded before any store");
        replaced_[op.results[0]] = v;
        continue;
      }
      if (op.kind == ir::OpKind::For) loop(op);
      if (op.kind == ir::OpKind::If) branch(op);
      kept.push_back(std::move(op));
    }
    b.ops = std::move(kept);
  }

  // Carried values are appended after any the loop already has.
  void loop(ir::Op& op) {
    const std::vector<int> vars = vars_stored_in(op, current_);
    ir::Block& body = op.regions[0];
    const std::vector<ir::ValueId> outside = current_;
    for (int var : vars) {
      op.operands.push_back(current_[var]);
      const ir::ValueId arg = f_.new_value(f_.vars[var]);
      body.args.push_back(arg);
      current_[var] = arg;
    }
    block(body);
    for (int var : vars) body.ops.back().operands.push_back(current_[var]);
    current_ = outside;
    for (int var : vars) {
      const ir::ValueId r = f_.new_value(f_.vars[var]);
      op.results.push_back(r);
      current_[var] = r;
    }
  }

  void branch(ir::Op& op) {
    const std::vector<int> vars = vars_stored_in(op, current_);
    const std::vector<ir::ValueId> outside = current_;
    for (ir::Block& region : op.regions) {
      current_ = outside;
      block(region);
      for (int var : vars) region.ops.back().operands.push_back(current_[var]);
    }
    current_ = outside;
    for (int var : vars) {
      const ir::ValueId r = f_.new_value(f_.vars[var]);
      op.results.push_back(r);
      current_[var] = r;
    }
  }

  ir::Function& f_;
  std::vector<ir::ValueId> current_;  // each variable's value at the point being rewritten
  std::unordered_map<ir::ValueId, ir::ValueId> replaced_;  // local_load result -> value
};

}  // namespace

void promote_locals(ir::Function& f) {
  TESSERA_INTERNAL_CHECK(f.stage == ir::Stage::Traced);
  Promoter(f).run();
  f.vars.clear();
  f.stage = ir::Stage::Promoted;
}

}  // namespace tessera::analysis

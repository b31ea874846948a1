#include "tessera/analysis/canonical_order.hpp"

#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::analysis {
namespace {

// Ops that keep their place: their order is the kernel's statement order (a Local is not
// expected here, Stage::Promoted, and is kept in place if present).
bool is_anchor(const ir::Op& op) {
  return ir::is_anchor(ir::op_info(op.kind).cls);
}

// Every operand used inside `b` (and its nested regions), in program order.
void uses_inside(const ir::Block& b, std::vector<ir::ValueId>& out) {
  ir::walk(
      b, [&](const ir::Op& op) { out.insert(out.end(), op.operands.begin(), op.operands.end()); });
}

void order_block(ir::Block& b) {
  // Inner blocks first: the order of the values a region uses from this block is read from them.
  for (ir::Op& op : b.ops)
    for (ir::Block& r : op.regions) order_block(r);

  std::unordered_map<ir::ValueId, size_t> def;  // value -> index of the op in b that makes it
  for (size_t i = 0; i < b.ops.size(); ++i)
    for (ir::ValueId r : b.ops[i].results) def[r] = i;

  std::vector<bool> placed(b.ops.size(), false);
  std::vector<size_t> order;
  order.reserve(b.ops.size());
  // Places the pure op that makes `v` (if it is made in this block and not yet placed), after its
  // operands. Iterative post-order, so a long chain of ops cannot overflow the stack.
  const auto place_value = [&](ir::ValueId v) {
    auto it = def.find(v);
    if (it == def.end() || placed[it->second] || is_anchor(b.ops[it->second])) return;
    std::vector<std::pair<size_t, size_t>> stack{{it->second, 0}};  // (op, next operand)
    placed[it->second] = true;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      const ir::Op& op = b.ops[i];
      if (next < op.operands.size()) {
        auto d = def.find(op.operands[next++]);
        if (d != def.end() && !placed[d->second] && !is_anchor(b.ops[d->second])) {
          placed[d->second] = true;
          stack.emplace_back(d->second, 0);
        }
        continue;
      }
      order.push_back(i);
      stack.pop_back();
    }
  };
  const auto place_needs = [&](const ir::Op& op) {
    for (ir::ValueId v : op.operands) place_value(v);
    std::vector<ir::ValueId> inner;
    for (const ir::Block& r : op.regions) uses_inside(r, inner);
    for (ir::ValueId v : inner) place_value(v);
  };

  size_t terminator = b.ops.size();
  for (size_t i = 0; i < b.ops.size(); ++i) {
    if (!is_anchor(b.ops[i])) continue;
    if (b.ops[i].kind == ir::OpKind::Yield) {
      terminator = i;
      continue;
    }
    place_needs(b.ops[i]);
    placed[i] = true;
    order.push_back(i);
  }
  if (terminator != b.ops.size()) place_needs(b.ops[terminator]);
  // Pure ops nothing needs: dead, removed by dce; kept (in their traced order) until then.
  for (size_t i = 0; i < b.ops.size(); ++i)
    if (!placed[i] && i != terminator) place_value(b.ops[i].results.at(0));
  if (terminator != b.ops.size()) order.push_back(terminator);
  TESSERA_INTERNAL_CHECK(order.size() == b.ops.size(), "canonical_order lost an op");

  std::vector<ir::Op> ops;
  ops.reserve(b.ops.size());
  for (size_t i : order) ops.push_back(std::move(b.ops[i]));
  b.ops = std::move(ops);
}

// Renumbers values in program order (a region's arguments and ops before the results of the op
// that owns it), so that value ids, and anything keyed or sorted by them, follow the new order.
class Renumber {
 public:
  explicit Renumber(ir::Function& f) : f_(f) {}
  void run() {
    block(f_.body);
    f_.values = std::move(types_);
  }

 private:
  ir::ValueId fresh(ir::ValueId old) {
    const auto id = static_cast<ir::ValueId>(types_.size());
    types_.push_back(f_.values.at(old));
    map_[old] = id;
    return id;
  }
  void block(ir::Block& b) {
    for (ir::ValueId& a : b.args) a = fresh(a);
    for (ir::Op& op : b.ops) {
      for (ir::ValueId& v : op.operands) v = map_.at(v);
      for (ir::Block& r : op.regions) block(r);
      for (ir::ValueId& r : op.results) r = fresh(r);
    }
  }
  ir::Function& f_;
  std::vector<ir::Type> types_;
  std::unordered_map<ir::ValueId, ir::ValueId> map_;
};

}  // namespace

void canonical_order(ir::Function& f) {
  TESSERA_INTERNAL_CHECK(f.stage == ir::Stage::Promoted);
  order_block(f.body);
  Renumber(f).run();
}

}  // namespace tessera::analysis

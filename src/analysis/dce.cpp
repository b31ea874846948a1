#include "tessera/analysis/dce.hpp"

#include <algorithm>

namespace tessera::analysis {
namespace {

// An unpadded load is an effect even when its tile is unused: its bounds check is what reports a
// tile reaching outside its tensor, and removing the load would remove that error with it. A
// gather checks its row indices always. A prefetch has no result to be used: it is kept as the
// statement the kernel's author wrote.
bool is_effect(const ir::Op& op) {
  return op.kind == ir::OpKind::Store || op.kind == ir::OpKind::StorePart ||
         op.kind == ir::OpKind::Accumulate || op.kind == ir::OpKind::Print ||
         op.kind == ir::OpKind::Prefetch || op.kind == ir::OpKind::Gather ||
         (op.kind == ir::OpKind::Load && !op.attrs.padded);
}

bool has_effect(const ir::Op& op) {
  bool effect = is_effect(op) || op.kind == ir::OpKind::Yield;
  for (const ir::Block& r : op.regions)
    ir::walk(r, [&](const ir::Op& o) { effect |= is_effect(o); });
  return effect;
}

void count_uses(const ir::Block& b, std::vector<int>& uses) {
  ir::walk(b, [&](const ir::Op& op) {
    for (ir::ValueId v : op.operands) ++uses[v];
  });
}

bool sweep(ir::Block& b, const std::vector<int>& uses) {
  bool changed = false;
  for (ir::Op& op : b.ops)
    for (ir::Block& r : op.regions) changed |= sweep(r, uses);
  const auto dead = [&](const ir::Op& op) {
    return !has_effect(op) && std::none_of(op.results.begin(), op.results.end(),
                                           [&](ir::ValueId v) { return uses[v] > 0; });
  };
  const size_t before = b.ops.size();
  b.ops.erase(std::remove_if(b.ops.begin(), b.ops.end(), dead), b.ops.end());
  return changed || b.ops.size() != before;
}

}  // namespace

void dce(ir::Function& f) {
  for (bool changed = true; changed;) {
    std::vector<int> uses(f.values.size(), 0);
    count_uses(f.body, uses);
    changed = sweep(f.body, uses);
  }
}

}  // namespace tessera::analysis

#include "tessera/backend/cuda/load_order.hpp"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tessera::backend::cuda {
namespace {

using ir::OpClass;

// A global load of an input: what moves ahead.
bool is_input_load(const ir::Function& f, const ir::Op& op) {
  const OpClass cls = ir::op_info(op.kind).cls;
  return (cls == OpClass::Load || cls == OpClass::Gather) &&
         f.params.at(static_cast<size_t>(op.attrs.param)).kind == ir::ParamKind::In;
}

// Ops nothing moves across: the anchors (ir::is_anchor), but for stores and store_parts, which
// write outputs that no input load reads (an accumulation stays put all the same).
bool is_fence(const ir::Op& op) {
  return ir::is_anchor(ir::op_info(op.kind).cls) && op.kind != ir::OpKind::Store &&
         op.kind != ir::OpKind::StorePart;
}

// Where each op of a block stood in the function's walk order before the pass (ir::walk: an op,
// then its regions' ops), moved with the op, so that the reordered kernel's error reports still
// name the op the host's table of sites (runtime::op_sites of the unreordered IR) gives.
struct Origins {
  std::vector<int> index;                     // one per op of the block
  std::vector<std::vector<Origins>> regions;  // one per op: its regions'
};
Origins origins_of(const ir::Block& b, int& next) {
  Origins o;
  for (const ir::Op& op : b.ops) {
    o.index.push_back(next++);
    o.regions.emplace_back();
    for (const ir::Block& r : op.regions) o.regions.back().push_back(origins_of(r, next));
  }
  return o;
}
void walk_origins(const Origins& o, std::vector<int>& out) {
  for (size_t i = 0; i < o.index.size(); ++i) {
    out.push_back(o.index[i]);
    for (const Origins& r : o.regions[i]) walk_origins(r, out);
  }
}

// Ops [first, last) of `ops`, none a fence, reordered: the input loads and the ops their
// coordinates need first, in rounds (a load's round: one more than the latest round of the loads
// its coordinates read), then the others in their order; `origins` moves with them. Returns
// whether anything moved.
bool order_segment(const ir::Function& f, std::vector<ir::Op>& ops, Origins& origins, size_t first,
                   size_t last) {
  std::unordered_map<ir::ValueId, size_t> def;  // value -> its op's index, within the segment
  for (size_t i = first; i < last; ++i)
    for (ir::ValueId r : ops[i].results) def[r] = i;

  // The loads and, backwards from them, every op in the segment they need (none is a fence, and
  // a store has no result, so each is a pure op).
  std::vector<bool> early(last - first, false);
  std::vector<size_t> work;
  for (size_t i = first; i < last; ++i)
    if (is_input_load(f, ops[i])) {
      early[i - first] = true;
      work.push_back(i);
    }
  if (work.empty()) return false;
  while (!work.empty()) {
    const size_t i = work.back();
    work.pop_back();
    for (ir::ValueId v : ops[i].operands)
      if (auto d = def.find(v); d != def.end() && !early[d->second - first]) {
        early[d->second - first] = true;
        work.push_back(d->second);
      }
  }
  // Rounds, in program order (operands come first): a value read from a load waits for it.
  std::vector<int> round(last - first, 0);
  for (size_t i = first; i < last; ++i) {
    if (!early[i - first]) continue;
    for (ir::ValueId v : ops[i].operands)
      if (auto d = def.find(v); d != def.end()) {
        const size_t j = d->second;
        round[i - first] =
            std::max(round[i - first], round[j - first] + (is_input_load(f, ops[j]) ? 1 : 0));
      }
  }
  // By (round, index): an operand's op has a lower round, or the same one and a lower index.
  std::vector<size_t> order;
  for (size_t i = first; i < last; ++i)
    if (early[i - first]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return round[a - first] < round[b - first]; });
  for (size_t i = first; i < last; ++i)
    if (!early[i - first]) order.push_back(i);
  bool moved = false;
  for (size_t k = 0; k < order.size(); ++k) moved |= order[k] != first + k;
  if (!moved) return false;
  std::vector<ir::Op> segment;
  std::vector<int> index;
  std::vector<std::vector<Origins>> regions;
  for (size_t i : order) {
    segment.push_back(std::move(ops[i]));
    index.push_back(origins.index[i]);
    regions.push_back(std::move(origins.regions[i]));
  }
  const auto at = static_cast<std::ptrdiff_t>(first);
  std::move(segment.begin(), segment.end(), ops.begin() + at);
  std::copy(index.begin(), index.end(), origins.index.begin() + at);
  std::move(regions.begin(), regions.end(), origins.regions.begin() + at);
  return true;
}

bool order_block(const ir::Function& f, ir::Block& b, Origins& origins) {
  bool moved = false;
  for (size_t i = 0; i < b.ops.size(); ++i)
    for (size_t r = 0; r < b.ops[i].regions.size(); ++r)
      moved |= order_block(f, b.ops[i].regions[r], origins.regions[i][r]);
  size_t first = 0;
  for (size_t i = 0; i <= b.ops.size(); ++i) {
    if (i < b.ops.size() && !is_fence(b.ops[i])) continue;
    moved |= order_segment(f, b.ops, origins, first, i);
    first = i + 1;
  }
  return moved;
}

}  // namespace

bool issue_loads_first(ir::Function& f, std::vector<int>* walk_origin) {
  int next = 0;
  Origins origins = origins_of(f.body, next);
  const bool moved = order_block(f, f.body, origins);
  if (walk_origin) {
    walk_origin->clear();
    walk_origins(origins, *walk_origin);
  }
  return moved;
}

}  // namespace tessera::backend::cuda

#include "tessera/analysis/safety.hpp"

#include <optional>
#include <unordered_map>
#include <vector>

namespace tessera::analysis {
namespace {

// The constant a value is defined by, if it is one (loop bounds are proved from these alone).
using Constants = std::unordered_map<ir::ValueId, double>;

Constants constants_of(const ir::Function& f) {
  Constants c;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Constant && op.results.size() == 1)
      c.emplace(op.results[0], op.attrs.value);
  });
  return c;
}

std::optional<double> constant(const Constants& c, ir::ValueId v) {
  const auto it = c.find(v);
  if (it == c.end()) return std::nullopt;
  return it->second;
}

// A for whose bounds are constants with lb < ub and step > 0 runs its body at least once; any
// other loop (bounds computed in the kernel, such as a tensor's tile count, which may be zero)
// may run zero times.
bool runs_at_least_once(const ir::Op& loop, const Constants& c) {
  const auto lb = constant(c, loop.operands.at(0));
  const auto ub = constant(c, loop.operands.at(1));
  const auto step = constant(c, loop.operands.at(2));
  return lb && ub && step && *lb<*ub&& * step> 0;
}

// A store or a store_part. A kernel that writes its tile in pieces covers it as it chooses (the
// pieces cannot leave the tile, so this is not a question of races); a piece counts as a store.
bool is_store(const ir::Op& op) {
  return op.kind == ir::OpKind::Store || op.kind == ir::OpKind::StorePart;
}

// Whether every path through `b` stores to parameter `param`: a store in `b` itself, an if whose
// two branches both do, or a loop proved to run at least once whose body does. Blocks have no
// early exits, so an op of `b` runs whenever `b` does.
bool always_stores(const ir::Block& b, int param, const Constants& c) {
  for (const ir::Op& op : b.ops) {
    if (is_store(op) && op.attrs.param == param) return true;
    if (op.kind == ir::OpKind::If && op.regions.size() == 2 &&
        always_stores(op.regions[0], param, c) && always_stores(op.regions[1], param, c))
      return true;
    if (op.kind == ir::OpKind::For && runs_at_least_once(op, c) &&
        always_stores(op.regions.at(0), param, c))
      return true;
  }
  return false;
}

}  // namespace

void check_safety(const ir::Function& f) {
  std::vector<bool> stored(f.params.size(), false);
  std::vector<SourceLoc> first_store(f.params.size());
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Accumulate) {
      const ir::Param& p = f.params.at(op.attrs.param);
      if (p.kind != ir::ParamKind::Accum)
        fail_at<KernelError>(op.loc, "kernel '", f.name, "' accumulates into '", p.name,
                             "', which is not an Accum parameter; only an Accum may take adds "
                             "from every block (declare it Accum<T>), and an Out is written "
                             "only by its own tile's store");
      return;
    }
    if (is_store(op)) {
      const ir::Param& p = f.params.at(op.attrs.param);
      if (p.kind == ir::ParamKind::Accum)
        fail_at<KernelError>(op.loc, "kernel '", f.name, "' stores to '", p.name,
                             "', an Accum parameter: the tiles of an Accum may overlap, so its "
                             "only permitted write is an add that commutes with every other "
                             "block's (",
                             p.name,
                             ".add(tile, {...})); to overwrite a tile, "
                             "make it an Out parameter");
      if (p.kind != ir::ParamKind::Out)
        fail_at<KernelError>(op.loc, "kernel '", f.name, "' stores to '", p.name,
                             "', which is not an Out parameter; inputs are read-only");
      if (op.kind == ir::OpKind::Store && !op.operands.empty() && op.operands.size() != 1)
        fail_at<KernelError>(op.loc, "kernel '", f.name, "': a store may not carry an index");
      if (!stored[op.attrs.param]) first_store[op.attrs.param] = op.loc;
      stored[op.attrs.param] = true;
    }
    if ((op.kind == ir::OpKind::Load || op.kind == ir::OpKind::Gather) &&
        f.params.at(op.attrs.param).kind == ir::ParamKind::Accum)
      fail_at<KernelError>(op.loc, "kernel '", f.name, "' reads '", f.params[op.attrs.param].name,
                           "', an Accum parameter: other blocks add into it while this one "
                           "runs, so what a read sees would depend on their timing; read the "
                           "sums after the launch (pass the tensor to a later launch as an In)");
    if (op.kind == ir::OpKind::Load && f.params.at(op.attrs.param).kind != ir::ParamKind::In)
      fail_at<KernelError>(op.loc, "kernel '", f.name, "' loads from '",
                           f.params[op.attrs.param].name, "', which is not an In parameter");
  });
  const Constants c = constants_of(f);
  for (size_t i = 0; i < f.params.size(); ++i) {
    if (f.params[i].kind != ir::ParamKind::Out) continue;
    if (!stored[i])
      fail_at<KernelError>(f.loc, "kernel '", f.name, "' never stores to its Out parameter '",
                           f.params[i].name,
                           "', so its tiles would keep whatever they held before; store a tile "
                           "to it, or make it an In parameter");
    if (!always_stores(f.body, static_cast<int>(i), c))
      fail_at<KernelError>(first_store[i], "kernel '", f.name, "' stores to its Out parameter '",
                           f.params[i].name,
                           "' only on some paths (under an if_ without a store in both "
                           "branches, or in a for_range that may run zero times), so some of its "
                           "tiles could keep whatever they held before; store to it "
                           "unconditionally, outside the if_ or the loop (select the value with "
                           "where(), or carry it out of the loop)");
  }
}

}  // namespace tessera::analysis

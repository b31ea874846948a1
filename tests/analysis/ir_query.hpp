// Small queries over IR for the analysis tests: find ops by kind, count them.
#pragma once

#include <vector>

#include "tessera/ir/ir.hpp"

namespace tessera::test {

// The ops of `kind` directly in `b` (not in nested regions).
inline std::vector<const ir::Op*> ops_of(const ir::Block& b, ir::OpKind kind) {
  std::vector<const ir::Op*> out;
  for (const ir::Op& op : b.ops)
    if (op.kind == kind) out.push_back(&op);
  return out;
}
// The only op of `kind` directly in `b`, or null when there is not exactly one.
inline const ir::Op* only(const ir::Block& b, ir::OpKind kind) {
  auto ops = ops_of(b, kind);
  return ops.size() == 1 ? ops[0] : nullptr;
}
// The only op of `kind` directly in `b` whose (first) result has type t, or null.
inline const ir::Op* only(const ir::Function& f, const ir::Block& b, ir::OpKind kind,
                          const ir::Type& t) {
  const ir::Op* found = nullptr;
  for (const ir::Op* op : ops_of(b, kind))
    if (!op->results.empty() && f.type(op->results[0]) == t) {
      if (found) return nullptr;
      found = op;
    }
  return found;
}
// How many ops of `kind` there are in `b` and every region nested in it.
inline int count(const ir::Block& b, ir::OpKind kind) {
  int n = 0;
  ir::walk(b, [&](const ir::Op& op) { n += op.kind == kind; });
  return n;
}
inline int count_locals(const ir::Block& b) {
  return count(b, ir::OpKind::LocalLoad) + count(b, ir::OpKind::LocalStore);
}

}  // namespace tessera::test

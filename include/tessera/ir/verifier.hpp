// The invariants of a Function, checked after tracing and after every pass:
//  - each op has the operand, result and region counts of its row in ops.def, and the result types
//    that infer_types gives for its operands (so every typing rule holds);
//  - SSA: each value is defined once, and used only where its definition dominates the use (earlier
//    in the same block or in an enclosing one);
//  - regions: a for's body takes (iv: i32, carried...) and yields the carried types, which are the
//    types of its inits and results; an if's two regions take nothing and yield its result types;
//    yield appears only as the last op of such a region;
//  - after promote_locals (Stage::Promoted) no local_load/local_store remains.
#pragma once

#include <optional>
#include <string>

#include "tessera/ir/ir.hpp"

namespace tessera::ir {

struct Diagnostic {
  SourceLoc loc;
  std::string message;  // names the op and the rule it breaks
};

std::optional<Diagnostic> verify(const Function& f);

// Verifies and throws InternalError naming `after` (the stage that produced f) on failure: IR
// that reaches a pass broken is a bug in Tessera, not in the user's kernel.
void verify_or_throw(const Function& f, std::string_view after);

}  // namespace tessera::ir

// promote_locals: turns the tracer's local variables into SSA (mem2reg on structured regions).
//
// Before: Stage::Traced; a variable is written by local_store and read by local_load, in any
// region; every variable is stored before it is first loaded, in the region that owns it.
// After: Stage::Promoted; no local ops remain. A variable stored inside a `for` body becomes a
// carried value of that loop (init operand, body argument, yield operand, result); one stored in
// an `if` region becomes a result of the `if`; every load is replaced by the value the variable
// held at that point. Carried values and results come in the order of the variables' first
// assignments inside the regions (statement order, the same on every compiler).
//
// It runs first, right after tracing: every later pass sees plain SSA (canonical_order, next,
// needs it).
#pragma once

#include "tessera/ir/ir.hpp"

namespace tessera::analysis {

void promote_locals(ir::Function& f);

}  // namespace tessera::analysis

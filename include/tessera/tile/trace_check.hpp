// Tracing must be a function of the specialization key: a kernel body that reads host state the
// key cannot see (a global that changes, a counter, a random number, a tile kept in a `static`
// from an earlier trace) would have its first trace baked in for every later launch. These checks
// find such bodies by tracing again and comparing the IR:
//  - trace_twice, on every new specialization (the body runs twice at trace time);
//  - recheck_trace, on every launch of a specialization compiled while TESSERA_CHECK=trace was
//    set (the body runs at each launch and is compared with the trace it was compiled from).
// Both throw KernelError at the user's line of the first op that differs, saying what differs.
#pragma once

#include <functional>

#include "tessera/ir/ir.hpp"

namespace tessera::tile {

// Runs `trace` twice and returns its IR when both runs agree.
ir::Function trace_twice(const std::function<ir::Function()>& trace);

// Runs `trace` now and throws when its IR differs from `recorded` (the trace the cached
// specialization was compiled from).
void recheck_trace(const ir::Function& recorded, const std::function<ir::Function()>& trace);

}  // namespace tessera::tile

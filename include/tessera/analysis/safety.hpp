// check_safety: the rules of DESIGN §2 that hold per kernel, checked on the IR (the DSL's types
// already make most of them impossible to break; this pass also guards IR built by other means).
//  - only Out parameters are stored to, and only In parameters are loaded from;
//  - every Out parameter is stored on every path through the kernel, so no output tile silently
//    keeps stale contents: a store counts when it is unconditional at the top level, in both
//    branches of an if_, or in a for_range whose constant bounds prove it runs at least once
//    (a loop bounded by a tile count or a kernel value may run zero times);
//  - stores carry no index: a block can only ever write its own tile;
//  - an Accum parameter is only accumulated into (no store, load or gather of it), and only an
//    Accum is: adds commute, so its blocks' overlapping tiles cannot race, while every other
//    output keeps the disjoint-tile rule.
// Throws KernelError naming the kernel, the parameter and the rule.
// Before: Stage::Promoted, verified. It changes nothing.
#pragma once

#include "tessera/ir/ir.hpp"

namespace tessera::analysis {

void check_safety(const ir::Function& f);

}  // namespace tessera::analysis

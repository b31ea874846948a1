// check_safety: the rules of DESIGN §2 that hold per kernel, checked on the IR (the DSL's types
// already make most of them impossible to break; this pass also guards IR built by other means).
//  - only Out parameters are stored to, and only In parameters are loaded from;
//  - every Out parameter is stored somewhere, so no output tile silently keeps stale contents;
//  - stores carry no index: a block can only ever write its own tile.
// Throws KernelError naming the kernel, the parameter and the rule.
// Before: Stage::Promoted, verified. It changes nothing.
#pragma once

#include "tessera/ir/ir.hpp"

namespace tessera::analysis {

void check_safety(const ir::Function& f);

}  // namespace tessera::analysis

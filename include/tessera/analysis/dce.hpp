// dce: removes ops without effects whose results nothing uses, and for/if ops whose regions have
// no effects and whose results nothing uses. Effects: store, print, and an unpadded load (its
// bounds check is the only thing that reports a tile reaching outside its tensor, so it stays even
// when its tile is unused).
// Before and after: Stage::Promoted, verified.
#pragma once

#include "tessera/ir/ir.hpp"

namespace tessera::analysis {

void dce(ir::Function& f);

}  // namespace tessera::analysis

// The CPU reference backend: the semantics of every op, one whole tile at a time. Tile blocks
// are spread over a pool of threads; each runs the kernel body once. Numerics follow the dtypes:
// every floating-point result is rounded to its dtype, integers wrap, reductions and mma
// accumulate in double and round once.
#pragma once

#include "tessera/backend/launch_args.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::backend::cpu {

// Runs all tile blocks of `args.grid`. Throws BoundsError (at the user's line) when an unpadded
// load reaches outside its tensor. `f` must be promoted and verified.
void run(const ir::Function& f, const LaunchArgs& args);

}  // namespace tessera::backend::cpu

// The order in which a kernel's global loads are issued. Every load the CUDA code generator emits
// stays where the code puts it (an asm volatile in tessera_memory.cuh: ptxas does not move it,
// which the row-wise kernels need), and canonical_order puts each load right before its first use.
// So a kernel that exchanges data between threads (a transpose, a reduction across rows, a scalar
// broadcast through shared memory) between two loads waits for the first load's data at the
// exchange's barrier before the second load is even issued: two round trips to memory where one
// would do. Decode attention's chunk walked the length, the value tile and the key tile so (three
// waits in series), its combine the partials and their maxima.
//
// issue_loads_first moves each block's input loads, with the pure ops that compute their
// coordinates, ahead of the block's other ops, in rounds: first the loads whose coordinates use no
// loaded value, then those whose coordinates wait for one round of loads, and so on; the rest of
// the block follows in its order. Loads read In parameters only, which no store of the launch
// writes, so a load may move ahead of a store. Nothing moves across a loop, a branch, a print or a
// prefetch (their order is the kernel's statement order, and a load moved ahead of a loop would
// hold its registers through it).
//
// Why not for every kernel: a row-wise kernel under an occupancy bound loads its epilogue's
// weights after its reduction on purpose (codegen.cpp, epilogue_start: one vector of them at a
// time, not the whole row in registers across the reduction), so the code generator applies this
// only to the kernels it plans without that bound (codegen.cpp, emit).
#pragma once

#include <vector>

#include "tessera/ir/ir.hpp"

namespace tessera::backend::cuda {

// Reorders f's blocks as above; returns whether any op moved. The result defines every value
// before its uses, keeps the stores, loops and branches in their order, and computes what f
// computes. With `walk_origin`: for each op of the result in walk order (ir::walk), its index in
// f's walk order before the pass (a kernel's error report names an op by that index: the host
// decodes it with the sites of the IR it compiled, runtime::op_sites).
bool issue_loads_first(ir::Function& f, std::vector<int>* walk_origin = nullptr);

}  // namespace tessera::backend::cuda

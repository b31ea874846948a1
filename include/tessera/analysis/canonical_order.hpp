// canonical_order: puts the ops of every block in one order that depends only on what the kernel
// computes, not on the order in which C++ evaluated the DSL calls that traced it.
//
// Why: the tracer appends an op when C++ evaluates the DSL call that makes it, and C++ leaves the
// order of function arguments and of most operator operands unspecified: g++ traces
// `load_like(x, z) + load_like(y, z)` or `mma(load(a, ...), load(b, ...), acc)` right to left,
// clang left to right. Without this pass the IR, the generated CUDA C++ and so the JIT cache key
// of one kernel would differ between compilers.
//
// Before: Stage::Promoted (no local_load/local_store, whose order against each other matters),
// verified.
// After: the same ops with the same operands, verified. In each block the ops with an effect or
// with regions (store, print, for, if, yield) keep their order, which is statement order in the
// kernel and so the same on every compiler. Every other op is pure and sits right before the
// first of them that needs it (as an operand, or inside its regions), after its own operands,
// which are placed first to last (post-order, left to right). Pure ops that nothing needs (dce
// removes them) come last, before a yield. Values are renumbered in the new program order.
//
// It runs right after promote_locals, so that every later pass, the backends and the JIT key see
// the same IR whatever compiler traced the kernel. (TESSERA_DUMP=traced still shows the order in
// which C++ evaluated the kernel.)
#pragma once

#include "tessera/ir/ir.hpp"

namespace tessera::analysis {

void canonical_order(ir::Function& f);

}  // namespace tessera::analysis

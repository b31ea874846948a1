// Variants of the SIMT vector add (examples/simt/vecadd.cu), for finding where the checked kernel's
// time goes: how its inputs are read. Timed by simt_vs_tile.
#pragma once

#include <tessera/simt/kernel.hpp>

namespace simt_bench {
using namespace tessera::simt;

// Inputs read with get_or (a bounds test, no stop): x[i] without its trap.
TESSERA_SIMT_KERNEL(vecadd_get_or, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  return contract<1>().block_at_most(1024).require(size<"x"> == size<"z">, size<"y"> == size<"z">);
};

// Inputs read with load_unchecked: the contract's size relations make the output's bounds test
// cover them.
TESSERA_SIMT_KERNEL(vecadd_inputs_unchecked, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  return contract<1>().block_at_most(1024).require(size<"x"> == size<"z">, size<"y"> == size<"z">);
};

// Inputs read by a load predicated on the bounds test (inline PTX), the stop on a failed test
// placed after it: the load need not wait for the test's branch.
TESSERA_SIMT_KERNEL(vecadd_predicated, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  return contract<1>().block_at_most(1024).require(size<"x"> == size<"z">, size<"y"> == size<"z">);
};

// Inputs read with no branch at all: a failed bounds test makes the load fault (address 0), which
// stops the kernel as the trap does.
TESSERA_SIMT_KERNEL(vecadd_faulting, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  return contract<1>().block_at_most(1024).require(size<"x"> == size<"z">, size<"y"> == size<"z">);
};

}  // namespace simt_bench

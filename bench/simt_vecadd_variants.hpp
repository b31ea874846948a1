// Variants of the SIMT vector add (examples/simt/vecadd.cu), for finding where the checked kernel's
// time goes: how its inputs are read. Each has the example's signature and contract. Timed by
// simt_vs_tile.
#pragma once

#include <tessera/simt/kernel.hpp>

#include "vecadd_kernel.hpp"

// TESSERA_SIMT_KERNEL(name) with simt_example::vecadd's parameters and launch contract.
#define SIMT_BENCH_VECADD_VARIANT(name)                                                       \
  TESSERA_SIMT_KERNEL(name, Index1D i, DisjointSpan<float> z, Span<const float> x,           \
                      Span<const float> y) {                                                  \
    return simt_example::vecadd::launch_contract();                                           \
  }

namespace simt_bench {
using namespace tessera::simt;

// Inputs read with get_or (a bounds test, no stop): x[i] without its trap.
SIMT_BENCH_VECADD_VARIANT(vecadd_get_or);
// Inputs read with load_unchecked: the contract's size relations make the output's bounds test
// cover them.
SIMT_BENCH_VECADD_VARIANT(vecadd_inputs_unchecked);
// Inputs read by a load predicated on the bounds test (inline PTX), the stop on a failed test
// placed after it: the load need not wait for the test's branch.
SIMT_BENCH_VECADD_VARIANT(vecadd_predicated);
// Inputs read with no branch at all: a failed bounds test makes the load fault (address 0), which
// stops the kernel as the trap does.
SIMT_BENCH_VECADD_VARIANT(vecadd_faulting);

}  // namespace simt_bench

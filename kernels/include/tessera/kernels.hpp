// The Tessera kernel library (Tessera::kernels): transformer kernels written only in the safe
// tile DSL, each behind a host function that allocates its result on its inputs' device, launches
// and waits. docs/kernels.md lists them with their shapes, dtypes and numerics.
#pragma once

#include "tessera/kernels/attention.hpp"
#include "tessera/kernels/elementwise.hpp"
#include "tessera/kernels/gemm.hpp"
#include "tessera/kernels/layout.hpp"
#include "tessera/kernels/linear.hpp"
#include "tessera/kernels/norm.hpp"
#include "tessera/kernels/rope.hpp"

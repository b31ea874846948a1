// out[r] = sum of row r of a row-major matrix, one warp per row (WarpIndex1D): the lanes stride
// along the row, then a shuffle reduction leaves the sum in lane 0, the one lane the witness lets
// write. The declaration and contract, seen by the host and by nvcc.
#pragma once

#include <tessera/simt/kernel.hpp>

namespace simt_example {
using namespace tessera::simt;

TESSERA_SIMT_KERNEL(row_sum, WarpIndex1D w, DisjointSpan<float> out, Span2D<const float> m) {
  return contract<1>().block_at_most(256).require(rows<"m"> == size<"out">,
                                                  threads<0> >= rows<"m"> * 32);
};

}  // namespace simt_example

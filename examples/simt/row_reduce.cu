// The body of row_sum, compiled ahead of time by nvcc.
#include "row_reduce_kernel.hpp"

namespace simt_example {

TESSERA_SIMT_DEFINE(row_sum, WarpIndex1D w, DisjointSpan<float> out, Span2D<const float> m) {
  float sum = 0.0f;
  if (w.warp() < m.rows()) {
    const Span<const float> row = m.row(w.warp());
    // Four independent partial sums keep four loads in flight per lane.
    float s[4] = {};
    long c = w.lane();
    for (; c + 96 < row.size(); c += 128)
      for (int u = 0; u < 4; ++u) s[u] += row.load_unchecked(c + 32 * u);
    for (; c < row.size(); c += 32) s[0] += row.load_unchecked(c);
    sum = (s[0] + s[1]) + (s[2] + s[3]);
  }
  // All 32 lanes take part (the contract asks for whole warps), then lane 0 holds the row's sum.
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (auto o = out.at(w)) *o = sum;
}

}  // namespace simt_example

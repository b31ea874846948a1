// The body of the tiled GEMM, compiled ahead of time by nvcc.
#include "gemm_kernel.hpp"

namespace simt_example {

TESSERA_SIMT_DEFINE(gemm, const GemmTile& t, DisjointSpan2D<float> c, Span2D<const float> a,
                    Span2D<const float> b) {
  constexpr int BM = kGemmTile, BN = kGemmTile, BK = kGemmDepth, TM = kGemmMicro, TN = kGemmMicro;
  // A's tile is stored transposed (k-major), so that a thread's TM values of one k are adjacent.
  __shared__ __align__(16) float as[BK][BM];
  __shared__ __align__(16) float bs[BK][BN];
  const int ty = static_cast<int>(threadIdx.y), tx = static_cast<int>(threadIdx.x);

  float acc[TM][TN] = {};
  for (long k0 = 0; k0 < a.cols(); k0 += BK) {
    // Stage the tiles; past the matrices' edges, zeros (they add nothing to the products).
    for (int l = t.thread_rank(); l < BM * BK; l += GemmTile::kThreads) {
      const int m = l / BK, k = l % BK;
      as[k][m] = a.get_or(t.block_row0() + m, k0 + k, 0.0f);
    }
    for (int l = t.thread_rank(); l < BK * BN; l += GemmTile::kThreads) {
      const int k = l / BN, n = l % BN;
      bs[k][n] = b.get_or(k0 + k, t.block_col0() + n, 0.0f);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 ra = *reinterpret_cast<const float4*>(&as[k][ty * TM]);
      const float4 rb = *reinterpret_cast<const float4*>(&bs[k][tx * TN]);
      const float av[TM] = {ra.x, ra.y, ra.z, ra.w};
      const float bv[TN] = {rb.x, rb.y, rb.z, rb.w};
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += av[i] * bv[j];
    }
    __syncthreads();
  }
  // Each thread writes its own micro-tile; slots past C's edges are empty.
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j)
      if (auto o = c.at(t, i, j)) *o = acc[i][j];
}

}  // namespace simt_example

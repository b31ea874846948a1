// C = A * B for row-major float matrices, tiled through shared memory: each block computes a
// 64 x 64 tile of C, each of its 16 x 16 threads a 4 x 4 micro-tile of it (TileIndex2D). The
// declaration and contract, seen by the host (simt_gemm.cpp) and by nvcc (gemm.cu).
#pragma once

#include <tessera/simt/kernel.hpp>

namespace simt_example {
using namespace tessera::simt;

inline constexpr int kGemmTile = 64;   // block tile: 64 x 64 elements of C
inline constexpr int kGemmMicro = 4;   // per thread: 4 x 4
inline constexpr int kGemmDepth = 16;  // K step staged in shared memory
using GemmTile = TileIndex2D<kGemmTile, kGemmTile, kGemmMicro, kGemmMicro>;

TESSERA_SIMT_KERNEL(gemm, const GemmTile& t, DisjointSpan2D<float> c, Span2D<const float> a,
                    Span2D<const float> b) {
  return contract<2>()
      .block_exactly(GemmTile::kBlockX, GemmTile::kBlockY)
      .require(rows<"a"> == rows<"c">, cols<"b"> == cols<"c">, cols<"a"> == rows<"b">);
};

}  // namespace simt_example

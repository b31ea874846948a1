// The Ampere pipeline's warp grid (pipeline.hpp): which [bm, bn, bk] tiles the cp.async +
// ldmatrix + mma.sync lowering takes, and how its warps share the accumulator.
#include "tessera/backend/cuda/pipeline.hpp"

namespace tessera::backend::cuda {
namespace {

// Rows of `elements` 16-bit values that the XOR swizzle of codegen_pipeline_sm80.cpp permutes
// within: 2 or 4 16-byte chunks (two or four rows share a 128-byte line), or whole 128-byte lines.
bool swizzlable(int elements) {
  const int chunks = elements / 8;
  return elements % 8 == 0 && (chunks == 2 || chunks == 4 || (chunks > 0 && chunks % 8 == 0));
}

}  // namespace

bool ampere_warps(MmaPipeline& p) {
  if (p.bm % 16 != 0 || p.bn % 16 != 0 || p.bk % 16 != 0 || !swizzlable(p.bk) || !swizzlable(p.bn))
    return false;
  // Eight warps for tiles of 128x256 and up (as cuBLAS's Ampere kernels), four below. Of the
  // grids with that many warps, the one whose warp tile reads the fewest fragments per mma:
  // per 16-deep step a warp tile wm x wn issues wm/16 + wn/16 ldmatrix for wm/16 * wn/8 mma.
  const int want = p.bm * p.bn >= 128 * 256 ? 8 : 4;
  for (int warps = want; warps >= 1; warps /= 2) {
    int best_m = 0;
    double best_cost = 0;
    for (int wm = 1; wm <= warps; wm *= 2) {
      const int wn = warps / wm;
      if ((p.bm / 16) % wm != 0 || (p.bn / 16) % wn != 0) continue;
      const double tm = p.bm / wm, tn = p.bn / wn;
      // 128 accumulator registers a thread at most (a 64x64 warp tile): more would spill.
      if (tm * tn / 32 > 128) continue;
      const double cost = (tm + tn) / (tm * tn);
      if (best_m == 0 || cost < best_cost) {
        best_m = wm;
        best_cost = cost;
      }
    }
    if (best_m > 0) {
      p.warps_m = best_m;
      p.warps_n = warps / best_m;
      return true;
    }
  }
  return false;
}

}  // namespace tessera::backend::cuda

// Bodies of the kernels in test_kernels.hpp. Compiled by nvcc (test_kernels.cu) and by NVRTC
// (the tests read this file); the include below is blanked for NVRTC, which has the API already.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_DEFINE(t_add, Index1D i, DisjointSpan<float> out, Span<const float> x,
                    Span<const float> y) {
  if (auto o = out.at(i)) *o = x[i] + y[i];
}

TESSERA_SIMT_DEFINE(t_scale2d, Index2D w, DisjointSpan2D<float> out, Span2D<const float> a,
                    float s) {
  if (auto o = out.at(w)) *o = s * a(w.row(), w.col());
}

TESSERA_SIMT_DEFINE(t_tile, const TileIndex2D<32, 32, 4, 4>& t, DisjointSpan2D<int> out, int base) {
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      if (auto o = out.at(t, r, c))
        *o = base + static_cast<int>((t.row0() + r) * out.cols() + t.col0() + c);
}

TESSERA_SIMT_DEFINE(t_rowsum, WarpIndex1D w, DisjointSpan<float> out, Span2D<const float> m) {
  float sum = 0;
  if (w.warp() < m.rows())
    for (long c = w.lane(); c < m.cols(); c += 32) sum += m(w.warp(), c);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (auto o = out.at(w)) *o = sum;
}

TESSERA_SIMT_DEFINE(t_reverse_blocks, Index1D i, DisjointSpan<int> out, Span<const int> x) {
  SharedSpan<int> s = dynamic_shared<int>();
  const int lane = static_cast<int>(threadIdx.x);
  s[lane] = x[i];
  __syncthreads();
  if (auto o = out.at(i)) *o = s[255 - lane];
}

TESSERA_SIMT_DEFINE(t_iota, Index1D i, DisjointSpan<int64_t> out, int64_t rows, int64_t cols) {
  if (auto o = out.at(i)) *o = i.value();
}

TESSERA_SIMT_DEFINE(t_first_n, Index1D i, DisjointSpan<int64_t> out, unsigned long n) {
  if (auto o = out.at(i)) *o = 1;
}

TESSERA_SIMT_DEFINE(t_big_shared, Index1D i, DisjointSpan<int> out) {
  SharedSpan<int> s = dynamic_shared<int>();
  s[threadIdx.x] = static_cast<int>(s.size());
  __syncthreads();
  if (auto o = out.at(i)) *o = s[threadIdx.x];
}

TESSERA_SIMT_DEFINE(t_huge_shared, Index1D i, DisjointSpan<int> out) {
  SharedSpan<int> s = dynamic_shared<int>();
  s[threadIdx.x] = 1;
  __syncthreads();
  if (auto o = out.at(i)) *o = s[threadIdx.x];
}

TESSERA_SIMT_DEFINE(t_future, Index1D i, DisjointSpan<int> out) {
  if (auto o = out.at(i)) *o = 1;
}

TESSERA_SIMT_DEFINE(t_raw_copy, float* dst, const float* src, int64_t n) {
  const long j = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j < n) dst[j] = src[j];
}

// The kernels the SIMT tests launch: declared (with their contracts) here, for the host; their
// bodies are in test_kernels.cuh, compiled ahead of time by nvcc (test_kernels.cu) and, embedded
// as text, by NVRTC.
#pragma once

#include <cstdint>

#include "tessera/simt/kernel.hpp"

using namespace tessera::simt;

// The text of test_kernels.cuh (embedded at build time), for Module::nvrtc.
extern const char kTestKernelsSource[];

// out[i] = x[i] + y[i]
TESSERA_SIMT_KERNEL(t_add, Index1D i, DisjointSpan<float> out, Span<const float> x,
                    Span<const float> y) {
  return contract<1>().block_at_most(1024).require(size<"x"> == size<"out">,
                                                   size<"y"> == size<"out">);
};

// out(r, c) = s * a(r, c)
TESSERA_SIMT_KERNEL(t_scale2d, Index2D w, DisjointSpan2D<float> out, Span2D<const float> a,
                    float s) {
  return contract<2>().block_exactly(32, 8).require(rows<"a"> == rows<"out">,
                                                    cols<"a"> == cols<"out">);
};

// out(r, c) = base + r * out.cols() + c, each thread writing its 4 x 4 micro-tile.
TESSERA_SIMT_KERNEL(t_tile, const TileIndex2D<32, 32, 4, 4>& t, DisjointSpan2D<int> out, int base) {
  return contract<2>().block_exactly(8, 8);
};

// out[r] = sum of row r of m, one warp per row (shuffle reduction; lane 0 writes).
TESSERA_SIMT_KERNEL(t_rowsum, WarpIndex1D w, DisjointSpan<float> out, Span2D<const float> m) {
  return contract<1>().block_at_most(256).require(rows<"m"> == size<"out">);
};

// out[i] = x[block start + 255 - lane]: each block reverses its 256 elements through dynamic
// shared memory.
TESSERA_SIMT_KERNEL(t_reverse_blocks, Index1D i, DisjointSpan<int> out, Span<const int> x) {
  return contract<1>()
      .block_exactly(256)
      .dynamic_shared(256 * sizeof(int))
      .require(size<"x"> == size<"out">, threads<0> == size<"out">);
};

// out[i] = i, for a product relation over scalars.
TESSERA_SIMT_KERNEL(t_iota, Index1D i, DisjointSpan<int64_t> out, int64_t rows, int64_t cols) {
  return contract<1>().block_at_most(512).require(size<"out"> == value<"rows"> * value<"cols">);
};

// out[i] = 1, under a relation over an unsigned scalar (whose value may pass index_t's range).
TESSERA_SIMT_KERNEL(t_first_n, Index1D i, DisjointSpan<int64_t> out, unsigned long n) {
  return contract<1>().block_at_most(512).require(size<"out"> >= value<"n">);
};

// Asks for more dynamic shared memory than a block gets without opting in.
TESSERA_SIMT_KERNEL(t_big_shared, Index1D i, DisjointSpan<int> out) {
  return contract<1>().block_exactly(128).dynamic_shared(100 * 1024);
};

// Asks for more dynamic shared memory than any GPU has per block.
TESSERA_SIMT_KERNEL(t_huge_shared, Index1D i, DisjointSpan<int> out) {
  return contract<1>().block_exactly(128).dynamic_shared(300 * 1024);
};

// Needs a GPU newer than any there is.
TESSERA_SIMT_KERNEL(t_future, Index1D i, DisjointSpan<int> out) {
  return contract<1>().min_compute_capability(99, 0);
};

// No contract, raw pointers: dst[j] = src[j] for j < n.
TESSERA_SIMT_KERNEL_UNCHECKED(t_raw_copy, float* dst, const float* src, int64_t n);

// Every kernel above, for Module::nvrtc<...> over test_kernels.cuh.
#define SIMT_TEST_KERNELS                                                                \
  t_add, t_scale2d, t_tile, t_rowsum, t_reverse_blocks, t_iota, t_first_n, t_big_shared, \
      t_huge_shared, t_future, t_raw_copy

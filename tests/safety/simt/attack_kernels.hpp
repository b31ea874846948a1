// Kernels that attack their own witnesses on the GPU (class 2 of issue 10): each thread hands its
// witness's or its Slot's bytes to its neighbour through shared memory, and writes its own global
// index through the neighbour's. Declarations, seen by the host (gpu_attack_test.cpp) and by nvcc
// (attack_kernels.cu).
#pragma once

#include <cstdint>

#include "tessera/simt/kernel.hpp"

namespace safety_attack {
using namespace tessera::simt;

inline constexpr int kBlock = 128;

TESSERA_SIMT_KERNEL(shared_witness, Index1D i, DisjointSpan<int64_t> out) {
  return contract<1>().block_exactly(kBlock);
};

TESSERA_SIMT_KERNEL(shared_slot, Index1D i, DisjointSpan<int64_t> out) {
  return contract<1>().block_exactly(kBlock);
};

// Thread (x, y) of 8 x 8 blocks writes through a union-punned TileIndex2D<16, 16, 2, 2> token,
// another index space than the kernel's Index2D: the kernel must stop.
TESSERA_SIMT_KERNEL(other_index_space, Index2D w, DisjointSpan2D<int> out) {
  return contract<2>().block_exactly(8, 8);
};

}  // namespace safety_attack

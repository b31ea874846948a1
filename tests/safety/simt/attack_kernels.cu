// Bodies of attack_kernels.hpp, compiled ahead of time by nvcc.
#include "attack_kernels.hpp"

namespace safety_attack {

// The thread's global index, computed by hand: what each element must end up holding.
__device__ int64_t me() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

TESSERA_SIMT_DEFINE(shared_witness, Index1D i, DisjointSpan<int64_t> out) {
  __shared__ unsigned char bytes[kBlock][sizeof(Index1D)];
  const unsigned t = threadIdx.x;
  memcpy(bytes[t], __builtin_addressof(i), sizeof(Index1D));
  __syncthreads();
  alignas(Index1D) unsigned char taken[sizeof(Index1D)];
  memcpy(taken, bytes[(t + 1) % kBlock], sizeof taken);
  const Index1D& neighbours = *reinterpret_cast<const Index1D*>(taken);
  if (auto o = out.at(neighbours)) *o = me();
}

TESSERA_SIMT_DEFINE(shared_slot, Index1D i, DisjointSpan<int64_t> out) {
  using S = decltype(out.at(i));
  __shared__ __align__(16) unsigned char bytes[kBlock][sizeof(S)];
  const unsigned t = threadIdx.x;
  {
    const S slot = out.at(i);
    memcpy(bytes[t], __builtin_addressof(slot), sizeof(S));
  }
  __syncthreads();
  alignas(S) unsigned char taken[sizeof(S)];
  memcpy(taken, bytes[(t + 1) % kBlock], sizeof taken);
  const S& neighbours = *reinterpret_cast<const S*>(taken);
  if (neighbours) *neighbours = me();
}

union PunnedTile {
  unsigned char raw[1];
  TileIndex2D<16, 16, 2, 2> t;
  __device__ PunnedTile() : raw{} {}
};

TESSERA_SIMT_DEFINE(other_index_space, Index2D w, DisjointSpan2D<int> out) {
  PunnedTile pun;
  if (auto o = out.at(pun.t, 1, 1)) *o = 1;
  if (auto o = out.at(w)) *o = 2;
}

}  // namespace safety_attack

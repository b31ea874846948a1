// Device runtime, part 5: the Ampere (sm_80 and newer) pieces of a pipelined mma loop: 16-byte
// asynchronous copies from global into shared memory, their commit/wait groups, and ldmatrix.
// Only kernels whose loop the layout pass lowered to an Ampere pipeline (MmaPipeline) call these.
//
// The protocol (one ring of S stages; every thread copies and every warp multiplies):
//   before the loop:  copy K steps 0 .. S-2 into stages 0 .. S-2, one commit group each
//   K step t:         wait until at most S-2 groups are pending (step t's has landed, for this
//                     thread), __syncthreads (for every thread; and every warp is done reading
//                     stage t-1), copy step t+S-1 into stage t-1's slot and commit (an empty
//                     group past the end, so the count stays in step), multiply stage t
// The groups are per thread; the barrier makes each thread's landed copies everyone's.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)

__device__ __forceinline__ unsigned tsr_shared_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies 16 bytes from global `src` to shared `dst` (both 16-byte aligned), of which only the
// first `bytes` (0 to 16) are read; the rest of the 16 are written as zeros. With bytes == 0
// nothing is read, so src need only be some valid address.
__device__ __forceinline__ void tsr_cp_async_16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;" ::"r"(tsr_shared_u32(dst)),
               "l"(src), "r"(bytes)
               : "memory");
}
// The same for a chunk wholly inside the tensor: all 16 bytes read.
__device__ __forceinline__ void tsr_cp_async_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;" ::"r"(tsr_shared_u32(dst)),
               "l"(src)
               : "memory");
}
__device__ __forceinline__ void tsr_cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void tsr_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// One 16-byte chunk of row `row`, columns [col, col + 8), of a row-major 2-D tensor of 16-bit
// elements with 16-byte aligned rows, into dst: zeros where the chunk lies outside the tensor
// (a ragged edge reads only the elements inside).
__device__ __forceinline__ void tsr_cp_async_chunk(void* dst, const TesseraTensorRef& t,
                                                   long long row, long long col) {
  const unsigned short* src = static_cast<const unsigned short*>(t.data);
  int bytes = 0;
  if (row >= 0 && row < t.shape[0] && col >= 0 && col < t.shape[1]) {
    const long long left = t.shape[1] - col;
    bytes = left >= 8 ? 16 : static_cast<int>(left) * 2;
    src += row * t.strides[0] + col;
  }
  tsr_cp_async_16(dst, src, bytes);
}

// ldmatrix: lanes 8i .. 8i+7 give the row addresses of 8x8 matrix i (16 bytes each); register i
// of every lane receives its two elements of matrix i in mma.sync's fragment order. .trans
// delivers each matrix transposed: B stored [k][n] comes out as mma's column-major B fragment.
// No "memory" clobber: the copies they read are ordered by tsr_cp_async_wait and __syncthreads,
// and leaving the compiler free to move them lets the next step's fragments load under the mma.
__device__ __forceinline__ void tsr_ldmatrix_x4(unsigned (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(tsr_shared_u32(row)));
}
__device__ __forceinline__ void tsr_ldmatrix_x4_trans(unsigned (&b0)[2], unsigned (&b1)[2],
                                                      const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(b0[0]), "=r"(b0[1]), "=r"(b1[0]), "=r"(b1[1])
               : "r"(tsr_shared_u32(row)));
}

#endif  // sm_80

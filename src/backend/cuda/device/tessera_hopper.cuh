// Device runtime, part 4: the Hopper (sm_90a) pieces of a pipelined mma loop: mbarriers, TMA
// tensor copies, wgmma fences and matrix descriptors, register reallocation. Only kernels whose
// loop the layout pass lowered to a pipeline (MmaPipeline) call these; they exist only where the
// instructions do (sm_90a), so every other kernel compiles as before on every architecture.
//
// The protocol (one ring of S stages, each with a `full` and an `empty` mbarrier):
//   producer, for each K tile:  wait empty[s] (parity ph ^ 1); arrive.expect_tx full[s] with the
//                               stage's bytes; issue the TMA copies, which complete_tx full[s]
//   consumer, for each K tile:  wait full[s] (parity ph); wgmma over the stage; wait for the
//                               previous stage's wgmma group (this one stays in flight); lane 0
//                               of each warp arrives on that stage's empty barrier
// and both advance s (flipping ph when s wraps). A fresh mbarrier is in phase 0, so the
// producer's first wait on parity 1 (the phase "before" it) returns at once.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TESSERA_HOPPER 1

__device__ __forceinline__ unsigned tsr_smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// ---- mbarriers ---------------------------------------------------------------------------------
__device__ __forceinline__ void tsr_mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(tsr_smem_addr(bar)), "r"(count)
               : "memory");
}
// Makes initialised barriers visible to the async proxy (the TMA unit) before any copy uses them.
__device__ __forceinline__ void tsr_mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::
                   : "memory");
}
__device__ __forceinline__ void tsr_mbar_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(tsr_smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void tsr_mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(tsr_smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void tsr_mbar_wait(unsigned long long* bar, unsigned parity) {
  const unsigned addr = tsr_smem_addr(bar);
  unsigned done = 0;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(addr), "r"(parity)
        : "memory");
  } while (!done);
}

// ---- TMA: a 2-D box of a tensor map into shared memory, completing on an mbarrier ---------------
// (c0, c1): the box's first element, innermost axis first. Elements outside the tensor read as 0.
__device__ __forceinline__ void tsr_tma_load_2d(void* dst, const TesseraTensorMap* map,
                                                unsigned long long* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3}], [%4];" ::"r"(tsr_smem_addr(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(tsr_smem_addr(bar))
      : "memory");
}
// The same over rank-3 and rank-4 tensors (attention's [L, H, D] and [B, L, H, D] tiles).
__device__ __forceinline__ void tsr_tma_load_3d(void* dst, const TesseraTensorMap* map,
                                                unsigned long long* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3, %4}], [%5];" ::"r"(tsr_smem_addr(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2),
      "r"(tsr_smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void tsr_tma_load_4d(void* dst, const TesseraTensorMap* map,
                                                unsigned long long* bar, int c0, int c1, int c2,
                                                int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, "
      "%3, %4, %5}], [%6];" ::"r"(tsr_smem_addr(dst)),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
      "r"(tsr_smem_addr(bar))
      : "memory");
}
__device__ __forceinline__ void tsr_tma_prefetch_map(const TesseraTensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<unsigned long long>(map))
               : "memory");
}

// ---- TMA stores: a 2-D box of shared memory into a tensor, tracked in bulk groups ---------------
// Elements of the box outside the tensor are not written. The threads that wrote the box fence
// their writes to the async proxy (tsr_fence_async_smem) and meet at a barrier before one thread
// issues the store; that thread waits (tsr_bulk_wait_read) before the box is written again.
__device__ __forceinline__ void tsr_tma_store_2d(const TesseraTensorMap* map, const void* src,
                                                 int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
          reinterpret_cast<unsigned long long>(map)),
      "r"(c0), "r"(c1), "r"(tsr_smem_addr(src))
      : "memory");
}
__device__ __forceinline__ void tsr_bulk_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}
// Until this thread's committed stores have read their shared memory (it may be written again).
__device__ __forceinline__ void tsr_bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}
// Until this thread's committed stores are complete.
__device__ __forceinline__ void tsr_bulk_wait() {
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}
__device__ __forceinline__ void tsr_fence_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void tsr_st_smem_u32(void* p, unsigned v) {
  asm volatile("st.shared.u32 [%0], %1;" ::"r"(tsr_smem_addr(p)), "r"(v) : "memory");
}

// ---- wgmma -------------------------------------------------------------------------------------
// A shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address, leading
// and stride byte offsets, all >> 4, and the swizzle mode in bits 62-63 (1: 128B, 2: 64B, 3: 32B).
__device__ __forceinline__ unsigned long long tsr_wgmma_desc(const void* smem, unsigned lbo,
                                                             unsigned sbo, unsigned swizzle) {
  const unsigned long long addr = tsr_smem_addr(smem);
  return ((addr & 0x3FFFFull) >> 4) | (static_cast<unsigned long long>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<unsigned long long>((sbo >> 4) & 0x3FFF) << 32) |
         (static_cast<unsigned long long>(swizzle) << 62);
}
__device__ __forceinline__ void tsr_wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void tsr_wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
// Waits until at most N committed wgmma groups of this warpgroup are still running.
template <int N>
__device__ __forceinline__ void tsr_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// ---- register reallocation between warpgroups (the whole warpgroup executes it) ---------------
template <int N>
__device__ __forceinline__ void tsr_regs_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void tsr_regs_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// A named barrier over the first `threads` threads of the block (the consumer warpgroups): the
// producer warpgroup never joins the consumers' epilogue barriers.
__device__ __forceinline__ void tsr_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

#endif  // sm_90a

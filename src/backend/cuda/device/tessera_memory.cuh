// Device runtime, part 2: global-memory access and the device-side error flag.

// ---- ordering between grids (programmatic dependent launch, sm_90+) --------------------------
// On sm_90+ the launcher may let this grid start while the kernel before it on the stream still
// runs (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, src/backend/cuda/launch.cpp).
// tsr_wait_prior_grids() returns once every prerequisite grid has completed and its memory
// operations are visible here (PTX ISA, griddepcontrol): every kernel calls it before its first
// global access, so a reader still sees the whole of the writer before it, and a writer never
// overwrites what an earlier kernel still reads. Without the attribute there is nothing to wait
// for and it returns at once. tsr_launch_dependents() lets the next grid on the stream be
// scheduled once every block of this one has called it or exited. Only sm_90+ code calls these
// (the code generator emits no call for sm_80), so they exist only where the instruction does.
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
__device__ __forceinline__ void tsr_wait_prior_grids() {
  asm volatile("griddepcontrol.wait;" ::: "memory");
}
__device__ __forceinline__ void tsr_launch_dependents() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}
// A prefetch op (ops.def), issued by thread 0 of each block before tsr_wait_prior_grids(): this
// block's share of t's address span, moved into L2 while the grids before this one finish. Safe
// before the wait: it is a hint that puts nothing in registers, and L2 is the point of coherence,
// so a line fetched early still takes the earlier kernels' writes. The span is [lowest element,
// highest element + 1) from the strides (negative and zero ones included), shrunk to 16-byte
// boundaries (the instruction's alignment and size unit), so no byte outside it is asked for; block
// b of gridDim.x takes the b-th of gridDim.x equal slices of it. A span over `cap_bytes` (an LM
// head, an embedding table) is left alone: it would evict what the kernels around it need, and no
// block reads all of it soon. Straight-line code, the instruction predicated on thread 0 and on a
// non-empty slice: a branch here could be laid out past the wait (it was, in the attention
// kernel), and the PTX check of the wait rule (grid_dependency_check.hpp) reads the code in order.
__device__ __forceinline__ void tsr_prefetch_l2_share(const TesseraTensorRef& t,
                                                      long long elem_bytes, long long cap_bytes) {
  long long lo = 0, hi = elem_bytes;  // byte offsets from t.data
  bool some = true;                   // every extent is positive
#pragma unroll
  for (int d = 0; d < TESSERA_MAX_RANK; ++d) {
    const long long reach = (t.shape[d] - 1) * t.strides[d] * elem_bytes;
    some = some & (t.shape[d] > 0);
    lo += reach < 0 ? reach : 0;
    hi += reach > 0 ? reach : 0;
  }
  const unsigned long long base = (unsigned long long)__cvta_generic_to_global(t.data);
  const unsigned long long first = (base + (unsigned long long)lo + 15ull) & ~15ull;
  const unsigned long long end = (base + (unsigned long long)hi) & ~15ull;
  const bool within_cap = hi - lo <= cap_bytes;
  // 16-byte chunks of the span: at most cap_bytes / 16 when it is issued at all.
  const unsigned long long chunks = some & within_cap & (end > first) ? (end - first) >> 4 : 0ull;
  const unsigned long long b = blockIdx.x, g = gridDim.x;
  const unsigned long long c0 = chunks * b / g, c1 = chunks * (b + 1) / g;
  const unsigned issue = (threadIdx.x == 0) & (c1 > c0);
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %2, 0;\n\t"
      "@p cp.async.bulk.prefetch.L2.global [%0], %1;\n\t}" ::"l"(first + c0 * 16ull),
      "r"((unsigned)((c1 - c0) * 16ull)), "r"(issue));
}
#endif

// ---- errors ------------------------------------------------------------------------------------
// Set once per module load by the first failing check of any launch, and read back by the host
// after the launch completes (cuModuleGetGlobal "tessera_error" / "tessera_error_info"):
//   tessera_error       0, or 1 + the pre-order index (ir::walk order) of the failing op
//   tessera_error_info  [0] what: 1 = an unpadded load reached outside its tensor,
//                                 2 = a for loop's step was not positive,
//                                 3 = a gather's row index was outside its tensor
//                       [1] the axis (1, 3) or the step (2)   [2] the element index along that axis
//                       [3] the tensor's extent along it   [4] the linear index of the tile block
// The failing access is skipped (the element reads as 0); the failing loop does not run.
extern "C" {
__device__ int tessera_error;
__device__ long long tessera_error_info[5];
}
__device__ __noinline__ void tsr_report(int op, long long what, long long a, long long b,
                                        long long c, long long block) {
  if (atomicCAS(&tessera_error, 0, op + 1) == 0) {
    tessera_error_info[0] = what;
    tessera_error_info[1] = a;
    tessera_error_info[2] = b;
    tessera_error_info[3] = c;
    tessera_error_info[4] = block;
    __threadfence();
  }
}

// An unpadded load reached outside its tensor: reports the first axis d with g_d outside [0, e_d).
__device__ __noinline__ void tsr_bounds(int op, long long block, long long g0, long long e0,
                                        long long g1 = 0, long long e1 = 1, long long g2 = 0,
                                        long long e2 = 1, long long g3 = 0, long long e3 = 1) {
  const long long g[4] = {g0, g1, g2, g3}, e[4] = {e0, e1, e2, e3};
  for (int d = 0; d < 4; ++d)
    if (g[d] < 0 || g[d] >= e[d]) {
      tsr_report(op, 1, d, g[d], e[d], block);
      return;
    }
}

// ---- vector accesses: 4, 8 or 16 bytes as 32-bit words ----------------------------------------
// Inputs are read-only for the whole launch and never alias an output (the launcher checks), so
// loads may go through the non-coherent read-only path.
// Each load is a volatile asm statement, issued where the code issues it: a plain asm statement
// counts as a pure function of its operands, which the compiler may run where the program does
// not. It did: NVVM hoisted a weight row's 16-byte loads above the bounds check that guards them
// (memcheck: a 16-float row read as 128 floats, past its allocation), and it hoisted a norm's
// weight row out of the tile loop, holding it in registers for the whole kernel at the cost of the
// occupancy a row-wise kernel lives on. (__ldg is the same volatile asm in CUDA's headers.)
__device__ __forceinline__ void tsr_ld_words(const void* p, unsigned (&w)[4]) {
  asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
               : "l"(p));
}
__device__ __forceinline__ void tsr_ld_words(const void* p, unsigned (&w)[2]) {
  asm volatile("ld.global.nc.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
}
__device__ __forceinline__ void tsr_ld_words(const void* p, unsigned (&w)[1]) {
  asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(w[0]) : "l"(p));
}
// 0, computed from x where the compiler cannot see it: `tid + tsr_zero_of(blk)` is a thread index
// that changes, for the compiler, with each tile a block walks (Emitter::run), so the addresses
// computed from it are not hoisted out of the tile loop and held in registers across the whole
// body (a norm's weight-row addresses, 15-19 registers and spills at the occupancy bound).
__device__ __forceinline__ long long tsr_zero_of(long long x) {
  long long r;
  asm("and.b64 %0, %1, 0;" : "=l"(r) : "l"(x));
  return r;
}
// Asks L2 for the line holding p (no register, no wait): Emitter::prefetch_next_tile.
__device__ __forceinline__ void tsr_prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}
__device__ __forceinline__ void tsr_st_words(void* p, const unsigned (&w)[4]) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(w[0]), "r"(w[1]),
               "r"(w[2]), "r"(w[3])
               : "memory");
}
__device__ __forceinline__ void tsr_st_words(void* p, const unsigned (&w)[2]) {
  asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(w[0]), "r"(w[1]) : "memory");
}
__device__ __forceinline__ void tsr_st_words(void* p, const unsigned (&w)[1]) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(w[0]) : "memory");
}

__device__ __forceinline__ void tsr_st_word(void* p, unsigned w) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(w) : "memory");
}
// Two f32 values rounded to nearest-even f16 / bf16 (as tsr_f32_to_f16 / _bf16 round each) and
// packed low-first into one word, by one instruction.
__device__ __forceinline__ unsigned tsr_pack_f16x2(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
  unsigned w;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
#else
  return tsr_f32_to_f16(lo) | (unsigned)tsr_f32_to_f16(hi) << 16;
#endif
}
__device__ __forceinline__ unsigned tsr_pack_bf16x2(float lo, float hi) {
#if __CUDA_ARCH__ >= 800
  unsigned w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
#else
  return tsr_f32_to_bf16(lo) | (unsigned)tsr_f32_to_bf16(hi) << 16;
#endif
}

// Element e of a little-endian word array, as storage type S (e is a constant after unrolling).
template <class S>
struct tsr_word;
template <>
struct tsr_word<float> {
  static __device__ __forceinline__ float get(const unsigned* w, int e) { return __uint_as_float(w[e]); }
  static __device__ __forceinline__ void put(unsigned* w, int e, float x) { w[e] = __float_as_uint(x); }
};
template <>
struct tsr_word<int> {
  static __device__ __forceinline__ int get(const unsigned* w, int e) { return (int)w[e]; }
  static __device__ __forceinline__ void put(unsigned* w, int e, int x) { w[e] = (unsigned)x; }
};
template <>
struct tsr_word<double> {
  static __device__ __forceinline__ double get(const unsigned* w, int e) {
    return __hiloint2double((int)w[2 * e + 1], (int)w[2 * e]);
  }
  static __device__ __forceinline__ void put(unsigned* w, int e, double x) {
    w[2 * e] = (unsigned)__double2loint(x);
    w[2 * e + 1] = (unsigned)__double2hiint(x);
  }
};
template <>
struct tsr_word<long long> {
  static __device__ __forceinline__ long long get(const unsigned* w, int e) {
    return (long long)(((tsr_u64)w[2 * e + 1] << 32) | w[2 * e]);
  }
  static __device__ __forceinline__ void put(unsigned* w, int e, long long x) {
    w[2 * e] = (unsigned)(tsr_u64)x;
    w[2 * e + 1] = (unsigned)((tsr_u64)x >> 32);
  }
};
// Sub-word types: put() ORs into the word, so the word array starts zeroed.
template <class S, int BITS>
struct tsr_subword {
  static __device__ __forceinline__ S get(const unsigned* w, int e) {
    const int per = 32 / BITS;
    return (S)(w[e / per] >> ((e % per) * BITS));
  }
  static __device__ __forceinline__ void put(unsigned* w, int e, S x) {
    const int per = 32 / BITS;
    w[e / per] |= ((unsigned)x & ((1u << BITS) - 1u)) << ((e % per) * BITS);
  }
};
template <>
struct tsr_word<unsigned short> : tsr_subword<unsigned short, 16> {
  // A register split rather than a shift and an integer conversion.
  static __device__ __forceinline__ unsigned short get(const unsigned* w, int e) {
    unsigned short lo, hi;
    asm("mov.b32 {%0, %1}, %2;" : "=h"(lo), "=h"(hi) : "r"(w[e >> 1]));
    return (e & 1) ? hi : lo;
  }
};
template <>
struct tsr_word<short> : tsr_subword<short, 16> {};
template <>
struct tsr_word<unsigned char> : tsr_subword<unsigned char, 8> {};
template <>
struct tsr_word<signed char> : tsr_subword<signed char, 8> {};

// Device runtime, part 3: tensor-core mma (mma.sync.m16n8k16, sm_80 and newer).
//
// Operands are staged in shared memory as 16-bit patterns: a row-major (rows of `ld` halves),
// b transposed (row n holds column n of b), so that each fragment register is one 32-bit load of
// two consecutive k. Fragment layouts (PTX ISA, "mma.m16n8k16"), with g = lane / 4, c = 2*(lane%4):
//   a: {a0,a1} = A[g][c..c+1], {a2,a3} = A[g+8][c..], {a4,a5} = A[g][c+8..], {a6,a7} =
//   A[g+8][c+8..] b: {b0,b1} = B[c..c+1][g], {b2,b3} = B[c+8..c+9][g] d: d0,d1 = D[g][c],
//   D[g][c+1]; d2,d3 = D[g+8][c], D[g+8][c+1]
__device__ __forceinline__ void tsr_frag_a(unsigned (&r)[4], const unsigned short* s, int ld,
                                           int lane) {
  const int g = lane >> 2, c = (lane & 3) * 2;
  r[0] = *reinterpret_cast<const unsigned*>(s + g * ld + c);
  r[1] = *reinterpret_cast<const unsigned*>(s + (g + 8) * ld + c);
  r[2] = *reinterpret_cast<const unsigned*>(s + g * ld + c + 8);
  r[3] = *reinterpret_cast<const unsigned*>(s + (g + 8) * ld + c + 8);
}
__device__ __forceinline__ void tsr_frag_b(unsigned (&r)[2], const unsigned short* s, int ld,
                                           int lane) {
  const int g = lane >> 2, c = (lane & 3) * 2;
  r[0] = *reinterpret_cast<const unsigned*>(s + g * ld + c);
  r[1] = *reinterpret_cast<const unsigned*>(s + g * ld + c + 8);
}
// d0..d3 += a @ b for one 16x8x16 step, f32 accumulation.
__device__ __forceinline__ void tsr_mma_f16(float& d0, float& d1, float& d2, float& d3,
                                            const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void tsr_mma_bf16(float& d0, float& d1, float& d2, float& d3,
                                             const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// ---- TF32 (mma(..., Precision::tf32) of f32 tiles) ----------------------------------------------
// f32 operands staged as f32 (a row-major, b transposed, rows of `ld` words), rounded to TF32 as
// each fragment register is loaded (cvt.rna: to nearest, ties away from zero, as the CPU backend
// rounds). mma.m16n8k8 fragments (PTX ISA, "mma.m16n8k8", .tf32), g = lane / 4, t = lane % 4:
//   a: a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]
//   b: b0 = B[t][g], b1 = B[t+4][g]        d: as for m16n8k16
__device__ __forceinline__ unsigned tsr_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ void tsr_frag_a_tf32(unsigned (&r)[4], const float* s, int ld,
                                                int lane) {
  const int g = lane >> 2, t = lane & 3;
  r[0] = tsr_tf32(s[g * ld + t]);
  r[1] = tsr_tf32(s[(g + 8) * ld + t]);
  r[2] = tsr_tf32(s[g * ld + t + 4]);
  r[3] = tsr_tf32(s[(g + 8) * ld + t + 4]);
}
__device__ __forceinline__ void tsr_frag_b_tf32(unsigned (&r)[2], const float* s, int ld,
                                                int lane) {
  const int g = lane >> 2, t = lane & 3;
  r[0] = tsr_tf32(s[g * ld + t]);
  r[1] = tsr_tf32(s[g * ld + t + 4]);
}
__device__ __forceinline__ void tsr_mma_tf32(float& d0, float& d1, float& d2, float& d3,
                                             const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

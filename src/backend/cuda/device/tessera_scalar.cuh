// Device runtime, part 1: element types and scalar semantics. Every generated kernel starts with
// this text (embedded in the library), so it uses nothing but CUDA built-ins: no headers, which
// keeps NVRTC fast and independent of the toolkit's include folder.
//
// The semantics are the CPU backend's (src/backend/cpu/elements.cpp, interpreter.cpp):
//  - f16 and bf16 values live in registers as float holding a value the 16-bit type represents;
//    each op computes in f32 and rounds its result to the type. (f32 has at least 2p+2 bits for
//    both, so + - * / sqrt give exactly the CPU's double-then-round results.)
//  - integer arithmetic wraps (two's complement) at the type's width; division by zero gives 0.
//  - max/min propagate NaN; float-to-integer casts truncate, saturate, and turn NaN into 0.

// ---- 16-bit floats ---------------------------------------------------------------------------
__device__ __forceinline__ float tsr_f16_to_f32(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ unsigned short tsr_f32_to_f16(float f) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
__device__ __forceinline__ float tsr_bf16_to_f32(unsigned short h) {
  return __uint_as_float(static_cast<unsigned>(h) << 16);
}
__device__ __forceinline__ unsigned short tsr_f32_to_bf16(float f) {
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
// Round an f32 result to the nearest f16 / bf16 value (ties to even), kept as float.
__device__ __forceinline__ float tsr_round_f16(float f) { return tsr_f16_to_f32(tsr_f32_to_f16(f)); }
__device__ __forceinline__ float tsr_round_bf16(float f) {
  return tsr_bf16_to_f32(tsr_f32_to_bf16(f));
}

// ---- 8-bit floats (OCP FP8; include/tessera/core/float8.hpp has the formats) -----------------
// Stored as their byte, held in registers as float. From float: round to nearest even, saturate
// to the largest finite value (infinity too), NaN -> 0x7f, as __nv_cvt_float_to_fp8 with
// __NV_SATFINITE does. sm_89+ convert with cvt.rn.satfinite; older GPUs with the same rounding
// in integer code (the host's algorithm, so both are bit for bit the CPU backend's).
__device__ __forceinline__ unsigned tsr_f32_to_fp8_soft(float f, unsigned M, int B,
                                                        unsigned max_code) {
  const unsigned u = __float_as_uint(f), sign = (u >> 24) & 0x80u, abs = u & 0x7fffffffu;
  if (abs > 0x7f800000u) return 0x7fu;
  if (abs == 0x7f800000u) return sign | max_code;
  const int biased = (int)(abs >> 23);
  if (biased == 0) return sign;
  const unsigned m = (abs & 0x7fffffu) | 0x800000u;
  const int e = biased - 127, ec = e < 1 - B ? 1 - B : e;
  const int shift = (ec - (int)M) - (biased - 150);
  if (shift > 25) return sign;
  unsigned r = m >> shift;
  const unsigned rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rest > half || (rest == half && (r & 1u))) ++r;
  unsigned code = ((unsigned)(ec + B - 1) << M) + r;
  return sign | (code > max_code ? max_code : code);
}
__device__ __forceinline__ unsigned char tsr_f32_to_e4m3(float f) {
#if __CUDA_ARCH__ >= 890
  // Infinity clamped to a finite value first, so it saturates like any large value; NaN passes
  // the clamp and is made the canonical 0x7f after.
  unsigned short h;
  const float c = f > 3.0e38f ? 3.0e38f : f < -3.0e38f ? -3.0e38f : f;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(c));
  return f != f ? (unsigned char)0x7f : (unsigned char)(h & 0xff);
#else
  return (unsigned char)tsr_f32_to_fp8_soft(f, 3, 7, 0x7e);
#endif
}
__device__ __forceinline__ unsigned char tsr_f32_to_e5m2(float f) {
#if __CUDA_ARCH__ >= 890
  unsigned short h;
  const float c = f > 3.0e38f ? 3.0e38f : f < -3.0e38f ? -3.0e38f : f;
  asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(h) : "f"(0.0f), "f"(c));
  return f != f ? (unsigned char)0x7f : (unsigned char)(h & 0xff);
#else
  return (unsigned char)tsr_f32_to_fp8_soft(f, 2, 15, 0x7b);
#endif
}
// To float: exact. e4m3's normals rebias the exponent (7 -> 127), subnormals are mant * 2^-9;
// e5m2 is the top byte of an f16.
__device__ __forceinline__ float tsr_e4m3_to_f32(unsigned char b) {
  const unsigned sign = (unsigned)(b & 0x80u) << 24, em = b & 0x7fu;
  if (em == 0x7fu) return __uint_as_float(sign | 0x7fc00000u);
  if (em < 8u) return __uint_as_float(sign | __float_as_uint((float)em * 0.001953125f));
  return __uint_as_float(sign | ((em << 20) + (120u << 23)));
}
__device__ __forceinline__ float tsr_e5m2_to_f32(unsigned char b) {
  return tsr_f16_to_f32((unsigned short)((unsigned)b << 8));
}
__device__ __forceinline__ float tsr_round_e4m3(float f) {
  return tsr_e4m3_to_f32(tsr_f32_to_e4m3(f));
}
__device__ __forceinline__ float tsr_round_e5m2(float f) {
  return tsr_e5m2_to_f32(tsr_f32_to_e5m2(f));
}

// x rounded to float, to odd: an inexact result is truncated and gets its lowest bit set. Rounding
// that float on to f16 or bf16 then gives the correctly rounded result of x, as the CPU backend
// does; through a float rounded to nearest it could round twice.
__device__ __forceinline__ float tsr_odd_f32(double x) {
  float f = __double2float_rz(x);
  if ((double)f != x && x == x) f = __int_as_float(__float_as_int(f) | 1);
  return f;
}

// Two 16-bit floats in one 32-bit word (the lower-addressed element in the low half), to and
// from float: the 16-byte accesses of f16/bf16 tiles convert a pair per instruction where the
// hardware can, and never move halves through integer conversions.
__device__ __forceinline__ void tsr_f16x2_to_f32(unsigned w, float& lo, float& hi) {
  asm("{.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;}"
      : "=f"(lo), "=f"(hi)
      : "r"(w));
}
__device__ __forceinline__ unsigned tsr_f32_to_f16x2(float lo, float hi) {
  unsigned w;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}
__device__ __forceinline__ void tsr_bf16x2_to_f32(unsigned w, float& lo, float& hi) {
  lo = __uint_as_float(w << 16);
  hi = __uint_as_float(w & 0xffff0000u);
}
__device__ __forceinline__ unsigned tsr_f32_to_bf16x2(float lo, float hi) {
  unsigned w;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
  return w;
}

__device__ __forceinline__ float tsr_inf_f32() { return __int_as_float(0x7f800000); }
__device__ __forceinline__ float tsr_nan_f32() { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double tsr_inf_f64() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ double tsr_nan_f64() { return __longlong_as_double(0x7ff8000000000000LL); }

// ---- wrapping integer arithmetic (narrower types are promoted to int and wrap on assignment) ---
__device__ __forceinline__ int tsr_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int tsr_sub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ int tsr_mul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ int tsr_neg(int a) { return (int)(0u - (unsigned)a); }
__device__ __forceinline__ int tsr_div(int a, int b) {
  return b == 0 ? 0 : b == -1 ? tsr_neg(a) : a / b;
}
__device__ __forceinline__ int tsr_abs(int a) { return a < 0 ? tsr_neg(a) : a; }
__device__ __forceinline__ int tsr_max(int a, int b) { return a < b ? b : a; }
__device__ __forceinline__ int tsr_min(int a, int b) { return b < a ? b : a; }

// a % b truncates (the sign of a); a % 0 is a, so a == (a / b) * b + a % b holds for every b.
__device__ __forceinline__ int tsr_rem(int a, int b) { return b == 0 ? a : b == -1 ? 0 : a % b; }
// Shifts by a count outside [0, 32) give 0 (<<) or the sign fill (>>), as PTX's clamped shifts
// do; narrower types are shifted as int and wrap on assignment, which gives the same results.
__device__ __forceinline__ int tsr_shl(int a, int b) {
  return (unsigned)b >= 32u ? 0 : (int)((unsigned)a << b);
}
__device__ __forceinline__ int tsr_shr(int a, int b) {
  return (unsigned)b >= 32u ? (a < 0 ? -1 : 0) : a >> b;
}

typedef unsigned long long tsr_u64;
__device__ __forceinline__ long long tsr_rem(long long a, long long b) {
  return b == 0 ? a : b == -1 ? 0 : a % b;
}
__device__ __forceinline__ long long tsr_shl(long long a, long long b) {
  return (tsr_u64)b >= 64ull ? 0 : (long long)((tsr_u64)a << b);
}
__device__ __forceinline__ long long tsr_shr(long long a, long long b) {
  return (tsr_u64)b >= 64ull ? (a < 0 ? -1 : 0) : a >> b;
}
__device__ __forceinline__ long long tsr_add(long long a, long long b) {
  return (long long)((tsr_u64)a + (tsr_u64)b);
}
__device__ __forceinline__ long long tsr_sub(long long a, long long b) {
  return (long long)((tsr_u64)a - (tsr_u64)b);
}
__device__ __forceinline__ long long tsr_mul(long long a, long long b) {
  return (long long)((tsr_u64)a * (tsr_u64)b);
}
__device__ __forceinline__ long long tsr_neg(long long a) { return (long long)(0ull - (tsr_u64)a); }
__device__ __forceinline__ long long tsr_div(long long a, long long b) {
  return b == 0 ? 0 : b == -1 ? tsr_neg(a) : a / b;
}
__device__ __forceinline__ long long tsr_abs(long long a) { return a < 0 ? tsr_neg(a) : a; }
__device__ __forceinline__ long long tsr_max(long long a, long long b) { return a < b ? b : a; }
__device__ __forceinline__ long long tsr_min(long long a, long long b) { return b < a ? b : a; }

// ---- floating point (IEEE: the kernel is compiled without fast-math) --------------------------
__device__ __forceinline__ float tsr_add(float a, float b) { return a + b; }
__device__ __forceinline__ float tsr_sub(float a, float b) { return a - b; }
__device__ __forceinline__ float tsr_mul(float a, float b) { return a * b; }
__device__ __forceinline__ float tsr_div(float a, float b) { return a / b; }
__device__ __forceinline__ float tsr_neg(float a) { return -a; }
__device__ __forceinline__ float tsr_abs(float a) { return fabsf(a); }
// max / min: NaN if either is NaN, else the larger (smaller), the first operand when they compare
// equal (max(-0, +0) is -0, as on the CPU backend). One compare that also takes b when b is NaN
// and one select (a NaN `a` falls through as itself): against a constant b (relu's 0) the NaN
// test folds away, leaving 2 instructions per element instead of 4, in every epilogue.
__device__ __forceinline__ float tsr_max(float a, float b) { return (a < b || b != b) ? b : a; }
__device__ __forceinline__ float tsr_min(float a, float b) { return (b < a || b != b) ? b : a; }
// Numerics::fast: max.NaN / min.NaN (sm_80+), one instruction; NaN still propagates, but which
// zero max(+0, -0) returns is the hardware's choice.
__device__ __forceinline__ float tsr_max_fast(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return tsr_max(a, b);
#endif
}
__device__ __forceinline__ float tsr_min_fast(float a, float b) {
#if __CUDA_ARCH__ >= 800
  float r;
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
#else
  return tsr_min(a, b);
#endif
}
// Numerics::fast exp: ex2.approx(x * log2 e), flushing a subnormal result to zero. (__expf keeps
// subnormal results, which costs a compare and two predicated multiplies per element around the
// one MUFU.EX2: a third of a fast softmax's exp.)
__device__ __forceinline__ float tsr_exp_fast(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
}
__device__ __forceinline__ double tsr_add(double a, double b) { return a + b; }
__device__ __forceinline__ double tsr_sub(double a, double b) { return a - b; }
__device__ __forceinline__ double tsr_mul(double a, double b) { return a * b; }
__device__ __forceinline__ double tsr_div(double a, double b) { return a / b; }
__device__ __forceinline__ double tsr_neg(double a) { return -a; }
__device__ __forceinline__ double tsr_abs(double a) { return fabs(a); }
__device__ __forceinline__ double tsr_max(double a, double b) {
  return (a != a || b != b) ? tsr_nan_f64() : (a < b ? b : a);
}
__device__ __forceinline__ double tsr_min(double a, double b) {
  return (a != a || b != b) ? tsr_nan_f64() : (b < a ? b : a);
}

// sigmoid(x) = 1 / (1 + e^-x): 0 for large negative x (e^-x overflows to inf), 1 for large x.
__device__ __forceinline__ float tsr_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ double tsr_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
__device__ __forceinline__ bool tsr_isinf(float x) { return fabsf(x) == tsr_inf_f32(); }
__device__ __forceinline__ bool tsr_isinf(double x) { return fabs(x) == tsr_inf_f64(); }
// clamp(x, lo, hi) = min(max(x, lo), hi): NaN if any operand is NaN (floats).
template <class T>
__device__ __forceinline__ T tsr_clamp(T x, T lo, T hi) {
  return tsr_min(tsr_max(x, lo), hi);
}
// fma of f16/bf16 values (held as float): fused in f64, then rounded to odd in f32, so that the
// caller's rounding to the 16-bit type is the one rounding of the exact a * b + c that the CPU
// backend computes the same way.
__device__ __forceinline__ float tsr_fma16(float a, float b, float c) {
  return tsr_odd_f32(fma((double)a, (double)b, (double)c));
}

// ---- float -> integer casts: truncate toward zero, saturate to [lo, hi], NaN -> 0 -------------
__device__ __forceinline__ long long tsr_f2i(double x, double lo, double hi) {
  return x != x ? 0 : x <= lo ? (long long)lo : x >= hi ? (long long)hi : (long long)x;
}
__device__ __forceinline__ long long tsr_f2i64(double x) {
  // 2^63 is not an int64; saturate before converting.
  return x != x                      ? 0
         : x >= 9.2233720368547758e18  ? 0x7fffffffffffffffLL
         : x <= -9.2233720368547758e18 ? (-0x7fffffffffffffffLL - 1)
                                       : (long long)x;
}

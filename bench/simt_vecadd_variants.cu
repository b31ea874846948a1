// Bodies of the vector-add variants (simt_vecadd_variants.hpp), compiled ahead of time by nvcc.
#include "simt_vecadd_variants.hpp"

namespace simt_bench {

TESSERA_SIMT_DEFINE(vecadd_get_or, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  if (auto o = z.at(i)) *o = x.get_or(i.value(), 0.0f) + y.get_or(i.value(), 0.0f);
}

TESSERA_SIMT_DEFINE(vecadd_inputs_unchecked, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  if (auto o = z.at(i)) *o = x.load_unchecked(i.value()) + y.load_unchecked(i.value());
}

// x[j] when j < x.size(), else 0 and the kernel stops; the load is issued without a branch.
__device__ __forceinline__ float read_predicated(const Span<const float>& x, index_t j) {
  const bool ok = j >= 0 && j < x.size();
  const float* p = x.unsafe_data() + (ok ? j : 0);  // an opt-out: a raw address
  float v;
  asm("{ .reg .pred q; setp.ne.u32 q, %2, 0; mov.b32 %0, 0; @q ld.global.f32 %0, [%1]; }"
      : "=f"(v)
      : "l"(p), "r"(static_cast<unsigned>(ok)));
  if (!ok) __trap();
  return v;
}

// x[j] when j < x.size(); else the load reads address 0 and the kernel stops with a fault.
__device__ __forceinline__ float read_or_fault(const Span<const float>& x, index_t j) {
  const bool ok = j >= 0 && j < x.size();
  const float* p = ok ? x.unsafe_data() + j : nullptr;  // an opt-out: a raw address
  float v;
  asm("ld.global.f32 %0, [%1];" : "=f"(v) : "l"(p));
  return v;
}

TESSERA_SIMT_DEFINE(vecadd_faulting, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  if (auto o = z.at(i)) *o = read_or_fault(x, i.value()) + read_or_fault(y, i.value());
}

TESSERA_SIMT_DEFINE(vecadd_predicated, Index1D i, DisjointSpan<float> z, Span<const float> x,
                    Span<const float> y) {
  if (auto o = z.at(i)) *o = read_predicated(x, i.value()) + read_predicated(y, i.value());
}

}  // namespace simt_bench

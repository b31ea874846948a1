// Rotary position embedding (RoPE) of query and key heads.
//
// Each head vector of dimension D is rotated pairwise: pair i (of D/2) by the angle
// position * base^(-2i/D). The pairs are (i, i + D/2) in the half-split style (GPT-NeoX, Llama,
// Qwen: "rotate_half") and (2i, 2i + 1) in the interleaved style (GPT-J). A pair (a, b) becomes
// (a cos - b sin, b cos + a sin), computed in f32 and rounded to T once.
//
// The result is a new tensor, not x rotated in place: a Tessera launch never writes a tensor it
// also reads (the ownership rule that keeps kernels race-free), so an in-place RoPE would be a
// kernel that reads and writes one partition, which the safe DSL does not express.
#pragma once

#include <cstdint>
#include <source_location>

#include <tessera/tessera.hpp>

namespace tessera::kernels {

enum class RopeStyle { half_split, interleaved };

// cos and sin of every (position, pair) angle, [max_positions, head_dim / 2] in f32, computed in
// double on the host and rounded once.
struct RopeTables {
  Tensor<float, 2> cos;
  Tensor<float, 2> sin;
};
RopeTables rope_tables(int64_t max_positions, int64_t head_dim, double base,
                       Device device = default_device(),
                       std::source_location l = std::source_location::current());

// x: [tokens, heads, head_dim]; positions: [tokens], each in [0, max_positions) of the tables (a
// position outside them is a BoundsError). Returns x rotated.
template <Element T>
Tensor<T, 3> rope(const Tensor<T, 3>& x, const Tensor<int32_t, 1>& positions,
                  const RopeTables& tables, RopeStyle style,
                  std::source_location l = std::source_location::current());

// The queries and the keys of the same tokens in one launch (their head counts may differ, as in
// grouped-query attention).
template <Element T>
struct RotatedQK {
  Tensor<T, 3> q;
  Tensor<T, 3> k;
};
template <Element T>
RotatedQK<T> rope_qk(const Tensor<T, 3>& q, const Tensor<T, 3>& k,
                     const Tensor<int32_t, 1>& positions, const RopeTables& tables, RopeStyle style,
                     std::source_location l = std::source_location::current());

// A step's attention inputs from one stacked projection qkv [T, (Hq + 2 Hkv) * D] (q, k, v side
// by side, as one linear layer writes them), in one launch: q and k split by head, each head
// RMS-normalized with its weight [D] (Qwen3's QK-norm, rounded to T as a separate norm would),
// then rotated at `positions`; v split by head. Hq must be a multiple of Hkv.
template <Element T>
struct SplitQKV {
  Tensor<T, 3> q, k, v;
};
template <Element T>
SplitQKV<T> qkv_norm_rope(const Tensor<T, 2>& qkv, int64_t heads, int64_t kv_heads,
                          const Tensor<T, 1>& q_norm, const Tensor<T, 1>& k_norm, float eps,
                          const Tensor<int32_t, 1>& positions, const RopeTables& tables,
                          RopeStyle style,
                          std::source_location l = std::source_location::current());

// qkv_norm_rope of a decode step with the KV-cache append folded in (one launch where there were
// qkv_norm_rope and kv_cache_append): qkv [B, (Hq + 2 Hkv) * D] holds one token of each of B
// sequences; sequence b's key and value heads, normalized and rotated as qkv_norm_rope does (v
// as it is), are stored at position positions[b] of k_cache and v_cache [B, S, Hkv, D] in place,
// and the rotated queries are returned as [B, 1, Hq, D] (the [B, Lq, H, D] layout with Lq = 1,
// which decode_attention_merged takes). positions[b] is also the token's RoPE angle, so it must
// be inside the tables (a BoundsError otherwise); a position outside [0, S) stores nothing. As for
// any output, the caches must be the only handles to their storage; each block owns all
// positions of one (sequence, key/value head) of each cache and writes one of them, so the append
// is one launch whatever the positions are, and nothing but the new row changes.
template <Element T>
Tensor<T, 4> qkv_norm_rope_append(const Tensor<T, 2>& qkv, int64_t heads, int64_t kv_heads,
                                  const Tensor<T, 1>& q_norm, const Tensor<T, 1>& k_norm, float eps,
                                  const Tensor<int32_t, 1>& positions, const RopeTables& tables,
                                  RopeStyle style, Tensor<T, 4>& k_cache, Tensor<T, 4>& v_cache,
                                  std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

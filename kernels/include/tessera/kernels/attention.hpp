// Attention: prefill (flash-attention forward: a block of queries against key tiles, with an
// online softmax, so the [L, L] score matrix never exists) and decode (one query token per
// sequence against a KV cache, the keys split over blocks and the partial results combined).
//
// Layouts are token-major, as a projection GEMM writes them: q [B, Lq, Hq, D], k and v
// [B, Lk, Hkv, D], the output like q (prefill also takes [L, H, D] tensors: a batch of one).
// Grouped-query attention: Hq is a multiple of Hkv, and query head h reads key/value head h / (Hq /
// Hkv). Scores and the softmax are f32; the probabilities are rounded to T before they multiply v
// (as every flash-attention kernel does), and the output is rounded to T once.
#pragma once

#include <cstdint>
#include <optional>
#include <source_location>

#include <tessera/tessera.hpp>

namespace tessera::kernels {

struct AttentionOptions {
  bool causal = false;
  // The scores' scale; 1 / sqrt(D) when not given.
  std::optional<float> scale;
};

// softmax(q k^T * scale [+ causal mask]) v. Causal masks are aligned to the end: query i (of Lq)
// sits at position Lk - Lq + i and sees keys 0 ..= that position (so a prefill that continues a
// cached prefix of Lk - Lq tokens is causal as a whole); causal needs Lq <= Lk.
// R is 4 ([B, L, H, D]) or 3 ([L, H, D]).
template <Element T, int R>
Tensor<T, R> flash_attention(const Tensor<T, R>& q, const Tensor<T, R>& k, const Tensor<T, R>& v,
                             const AttentionOptions& options = {},
                             std::source_location l = std::source_location::current());

// One query token per sequence: q [B, Hq, D] against the first lengths[b] positions of sequence
// b's cache, k_cache and v_cache [B, S, Hkv, D] (lengths in [1, S]). The positions are split into
// chunks (32 positions for a contiguous cache, kDecodeChunk for a paged one), one tile block per
// (sequence, head, chunk), so a long context is spread over many blocks; a second kernel combines
// the chunks' partial softmaxes. Returns [B, Hq, D].
inline constexpr int64_t kDecodeChunk = 256;
template <Element T>
Tensor<T, 3> decode_attention(const Tensor<T, 3>& q, const Tensor<T, 4>& k_cache,
                              const Tensor<T, 4>& v_cache, const Tensor<int32_t, 1>& lengths,
                              std::optional<float> scale = std::nullopt,
                              std::source_location l = std::source_location::current());

// decode_attention with the heads merged: [B, Hq * D], the layout an output projection reads
// (what merge_heads of decode_attention's result gives, without that copy's launch). q is
// [B, Hq, D] (R = 3) or [B, 1, Hq, D] (R = 4: what qkv_norm_rope_append returns).
template <Element T, int R>
Tensor<T, 2> decode_attention_merged(const Tensor<T, R>& q, const Tensor<T, 4>& k_cache,
                                     const Tensor<T, 4>& v_cache, const Tensor<int32_t, 1>& lengths,
                                     std::optional<float> scale = std::nullopt,
                                     std::source_location l = std::source_location::current());

// The same over a paged cache: k_pages and v_pages [P, page_size, Hkv, D] hold pages of
// page_size positions (16, 32, 64, 128 or 256), and position p of sequence b is row
// p % page_size of page block_table[b, p / page_size] (block_table [B, pages per sequence], i32;
// lengths[b] <= its row's positions). A page id outside [0, P) is a BoundsError naming 'k_pages'.
template <Element T>
Tensor<T, 3> paged_decode_attention(const Tensor<T, 3>& q, const Tensor<T, 4>& k_pages,
                                    const Tensor<T, 4>& v_pages,
                                    const Tensor<int32_t, 2>& block_table,
                                    const Tensor<int32_t, 1>& lengths,
                                    std::optional<float> scale = std::nullopt,
                                    std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

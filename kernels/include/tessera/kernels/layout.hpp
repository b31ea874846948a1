// Moving activations between the layouts of a transformer block, and writing new keys and values
// into a KV cache.
//
// These are copies. A host Tensor has no reshape view yet (only slice), so [T, H * D] -> [T, H, D]
// is a kernel; and a launch cannot write part of a tensor while keeping the rest (an output is a
// whole partitioned tensor, every tile of it stored), so a cache write makes a new cache holding
// the old positions and the new ones. Both are correct and cost a pass over the memory; a
// zero-copy reshape and an in-place cache append need runtime support (docs/kernels.md).
#pragma once

#include <cstdint>
#include <source_location>

#include <tessera/tessera.hpp>

namespace tessera::kernels {

// [T, H * head_dim] -> [T, H, head_dim].
template <Element T>
Tensor<T, 3> split_heads(const Tensor<T, 2>& x, int64_t head_dim,
                         std::source_location l = std::source_location::current());
// Heads [first, first + count) of x [T, >= (first + count) * head_dim]: [T, count, head_dim]
// (one stacked projection's output, q k v, taken apart).
template <Element T>
Tensor<T, 3> split_heads(const Tensor<T, 2>& x, int64_t head_dim, int64_t first, int64_t count,
                         std::source_location l = std::source_location::current());

// [T, H, D] -> [T, H * D].
template <Element T>
Tensor<T, 2> merge_heads(const Tensor<T, 3>& x,
                         std::source_location l = std::source_location::current());

// The cache [B, S, H, D] with positions [start, start + n) replaced by fresh [B, n, H, D] (or
// [n, H, D] when B is 1); start + n <= S.
template <Element T, int R>
Tensor<T, 4> kv_cache_write(const Tensor<T, 4>& cache, const Tensor<T, R>& fresh, int64_t start,
                            std::source_location l = std::source_location::current());

// Positions [start[b], start[b] + n) of the cache [B, S, H, D] replaced by fresh [B, n, H, D] (or
// [n, H, D] when B is 1) in place: the launch writes the cache through a partition of it (so
// `cache` must be the only handle to its storage, as for any output) and stores only the new
// positions, so a decode step moves O(n) bytes where kv_cache_write copies the whole cache.
// `start` [B] is read on the device, so a captured graph can replay the append at a position an
// earlier launch of the graph wrote; fresh rows that would land outside [0, S) are dropped (the
// caller keeps start + n <= S, as the engine does on the host).
inline constexpr int64_t kAppendChunk = 64;  // cache positions per block
template <Element T, int R>
void kv_cache_append(Tensor<T, 4>& cache, const Tensor<T, R>& fresh,
                     const Tensor<int32_t, 1>& start,
                     std::source_location l = std::source_location::current());
// A step's keys and values appended in one launch (k_cache and v_cache of one shape).
template <Element T, int R>
void kv_cache_append(Tensor<T, 4>& k_cache, Tensor<T, 4>& v_cache, const Tensor<T, R>& k,
                     const Tensor<T, R>& v, const Tensor<int32_t, 1>& start,
                     std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

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

// [T, H, D] -> [T, H * D].
template <Element T>
Tensor<T, 2> merge_heads(const Tensor<T, 3>& x,
                         std::source_location l = std::source_location::current());

// The cache [B, S, H, D] with positions [start, start + n) replaced by fresh [B, n, H, D] (or
// [n, H, D] when B is 1); start + n <= S.
template <Element T, int R>
Tensor<T, 4> kv_cache_write(const Tensor<T, 4>& cache, const Tensor<T, R>& fresh, int64_t start,
                            std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

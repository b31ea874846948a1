// Layout copies: each tile block moves one head vector (split, merge) or one cache position of all
// heads (cache write).

#include "tessera/kernels/layout.hpp"
#include "host.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

template <Element T>
TESSERA_KERNEL(split_heads_copy, Out<T, 3> y, In<T, 2> x, Scalar<int32_t> first) {
  const int64_t dim = y.shape()[2];
  y.store(load(x, {tile_index(0), tile_index(1) + first}, {1, dim}).reshape({1, 1, dim}));
};

template <Element T>
TESSERA_KERNEL(merge_heads_copy, Out<T, 2> y, In<T, 3> x) {
  const int64_t dim = y.shape()[1];
  y.store(load(x, {tile_index(0), tile_index(1), 0}, {1, 1, dim}).reshape({1, dim}));
};

template <Element T>
TESSERA_KERNEL(kv_cache_write_positions, Out<T, 4> out, In<T, 4> cache, In<T> fresh,
               Scalar<int32_t> start) {
  const Shape& tile = out.shape();  // [1, 1, H, D]: one position of one sequence
  const Index b = tile_index(0), pos = tile_index(1);
  const Index rel = pos - start;  // the position in `fresh`; outside [0, n) keeps the old value
  const Index n = fresh.dim(fresh.rank() - 3).template cast<int32_t>();
  const Tile<T> now = fresh.rank() == 4
                          ? load(fresh, {b, rel, 0, 0}, tile)
                          : load(fresh, {rel, 0, 0}, {1, tile[2], tile[3]}).reshape(tile);
  out.store(select((rel >= 0) & (rel < n), now, load(cache, {b, pos, 0, 0}, tile)));
};

// The in-place append: the cache itself is the output, cut into chunks of kAppendChunk positions.
// Each block stores the fresh rows that land in its chunk, one position (all heads) a piece;
// store_part leaves the rest of its tile as it was, and a block whose chunk gets no row runs no
// store that lands in its tile. The first row is stored at the top level (its offset is the
// chunk's extent, outside the tile, when there is none), the others in a loop; a prefill's n rows
// span n / kAppendChunk + 1 chunks.
// Stores this block's rows of `fresh` into its chunk of `cache`.
template <Element T>
void append_rows(const Out<T, 4>& cache, const In<T>& fresh, const In<int32_t, 1>& start) {
  const Shape& tile = cache.shape();  // [1, kAppendChunk, H, D]
  const Shape piece{1, 1, tile[2], tile[3]};
  const int32_t chunk = static_cast<int32_t>(tile[1]);
  const Index b = tile_index(0), first = tile_index(1) * chunk;
  // Padded: start has one entry per sequence (checked on the host); an unpadded load would give
  // the kernel an error report, which a captured graph copies out in a node of its own.
  const Index s = load(start, {b}, {1}).reshape({});
  const Index n = fresh.dim(fresh.rank() - 3).template cast<int32_t>();
  // Rows [lo, hi) of this chunk receive fresh rows [first + lo - s, first + hi - s).
  const Index lo = minimum(maximum(s - first, 0), chunk);
  const Index hi = minimum(maximum(s + n - first, 0), chunk);
  auto row = [&](const Index& r) {
    const Index rel = first + r - s;
    return fresh.rank() == 4 ? load(fresh, {b, rel, 0, 0}, piece)
                             : load(fresh, {rel, 0, 0}, {1, tile[2], tile[3]}).reshape(piece);
  };
  const Index top = select(lo < hi, lo, chunk);
  cache.store_part(row(top), {0, top, 0, 0});
  for_range(lo + 1, hi, [&](Index r) { cache.store_part(row(r), {0, r, 0, 0}); });
}

template <Element T>
TESSERA_KERNEL(kv_cache_append_rows, Out<T, 4> cache, In<T> fresh, In<int32_t, 1> start) {
  append_rows(cache, fresh, start);
};

// Keys and values of one step in one launch.
template <Element T>
TESSERA_KERNEL(kv_cache_append_pair, Out<T, 4> k_cache, Out<T, 4> v_cache, In<T> k, In<T> v,
               In<int32_t, 1> start) {
  append_rows(k_cache, k, start);
  append_rows(v_cache, v, start);
};

}  // namespace

template <Element T>
Tensor<T, 3> split_heads(const Tensor<T, 2>& x, int64_t head_dim, std::source_location l) {
  detail::require_nonempty("split_heads", "x", x.shape(), 2, l);
  detail::require(head_dim > 0 && x.dim(1) % head_dim == 0, l,
                  "split_heads: 'x' has rows of " + std::to_string(x.dim(1)) +
                      " elements, not a whole number of heads of " + std::to_string(head_dim));
  return split_heads(x, head_dim, 0, x.dim(1) / head_dim, l);
}

template <Element T>
Tensor<T, 3> split_heads(const Tensor<T, 2>& x, int64_t head_dim, int64_t first, int64_t count,
                         std::source_location l) {
  detail::require_nonempty("split_heads", "x", x.shape(), 2, l);
  detail::require(head_dim > 0 && first >= 0 && count > 0 && (first + count) * head_dim <= x.dim(1),
                  l,
                  "split_heads: heads [" + std::to_string(first) + ", " +
                      std::to_string(first + count) + ") of " + std::to_string(head_dim) +
                      " elements do not fit rows of " + std::to_string(x.dim(1)) + " elements");
  auto [y, x1, f1] =
      split_heads_copy<T>(detail::new_tensor<T, 3>({x.dim(0), count, head_dim}, x.device(), l)
                              .partition({1, 1, head_dim}),
                          x, first)
          .sync();
  return std::move(y).unpartition();
}

template <Element T>
Tensor<T, 2> merge_heads(const Tensor<T, 3>& x, std::source_location l) {
  detail::require_nonempty("merge_heads", "x", x.shape(), 3, l);
  auto [y, x1] =
      merge_heads_copy<T>(detail::new_tensor<T, 2>({x.dim(0), x.dim(1) * x.dim(2)}, x.device(), l)
                              .partition({1, x.dim(2)}),
                          x)
          .sync();
  return std::move(y).unpartition();
}

template <Element T, int R>
Tensor<T, 4> kv_cache_write(const Tensor<T, 4>& cache, const Tensor<T, R>& fresh, int64_t start,
                            std::source_location l) {
  static_assert(R == 3 || R == 4, "kv_cache_write: fresh is [B, n, H, D] or [n, H, D]");
  const char* fn = "kv_cache_write";
  detail::require_nonempty(fn, "cache", cache.shape(), 4, l);
  Shape want = cache.shape();
  want[1] = fresh.dim(R - 3);
  if (R == 3) want.erase(want.begin());
  detail::require(R == 4 || cache.dim(0) == 1, l,
                  std::string(fn) +
                      ": a [n, H, D] 'fresh' is for a cache of batch 1, but the "
                      "cache is " +
                      to_string(cache.shape()));
  detail::require_shape(fn, "fresh", fresh.shape(), want, l);
  detail::require(start >= 0 && start + fresh.dim(R - 3) <= cache.dim(1), l,
                  std::string(fn) + ": positions [" + std::to_string(start) + ", " +
                      std::to_string(start + fresh.dim(R - 3)) + ") do not fit a cache of " +
                      std::to_string(cache.dim(1)) + " positions");
  detail::require_same_device(fn, "fresh", fresh.device(), cache.device(), l);
  auto [out, c1, f1, s1] =
      kv_cache_write_positions<T>(detail::new_tensor<T, 4>(cache.shape(), cache.device(), l)
                                      .partition({1, 1, cache.dim(2), cache.dim(3)}),
                                  cache, Tensor<T>(fresh), start)
          .sync();
  return std::move(out).unpartition();
}

namespace {

template <Element T, int R>
void check_append(const char* fn, const char* cache_name, const Tensor<T, 4>& cache,
                  const char* fresh_name, const Tensor<T, R>& fresh,
                  const Tensor<int32_t, 1>& start, SourceLoc l) {
  static_assert(R == 3 || R == 4, "kv_cache_append: fresh is [B, n, H, D] or [n, H, D]");
  detail::require_nonempty(fn, cache_name, cache.shape(), 4, l);
  Shape want = cache.shape();
  want[1] = fresh.dim(R - 3);
  if (R == 3) want.erase(want.begin());
  detail::require(R == 4 || cache.dim(0) == 1, l,
                  std::string(fn) + ": a [n, H, D] '" + fresh_name +
                      "' is for a cache of batch 1, but the cache is " + to_string(cache.shape()));
  detail::require_shape(fn, fresh_name, fresh.shape(), want, l);
  detail::require(fresh.dim(R - 3) <= cache.dim(1), l,
                  std::string(fn) + ": " + std::to_string(fresh.dim(R - 3)) +
                      " positions do not fit a cache of " + std::to_string(cache.dim(1)));
  detail::require_shape(fn, "start", start.shape(), {cache.dim(0)}, l);
  detail::require_same_device(fn, fresh_name, fresh.device(), cache.device(), l);
  detail::require_same_device(fn, "start", start.device(), cache.device(), l);
}

}  // namespace

template <Element T, int R>
void kv_cache_append(Tensor<T, 4>& cache, const Tensor<T, R>& fresh,
                     const Tensor<int32_t, 1>& start, std::source_location l) {
  check_append("kv_cache_append", "cache", cache, "fresh", fresh, start, l);
  auto [out, f1, s1] =
      kv_cache_append_rows<T>(
          std::move(cache).partition({1, kAppendChunk, cache.dim(2), cache.dim(3)}, l),
          Tensor<T>(fresh), start)
          .sync();
  cache = std::move(out).unpartition();
}

template <Element T, int R>
void kv_cache_append(Tensor<T, 4>& k_cache, Tensor<T, 4>& v_cache, const Tensor<T, R>& k,
                     const Tensor<T, R>& v, const Tensor<int32_t, 1>& start,
                     std::source_location l) {
  check_append("kv_cache_append", "k_cache", k_cache, "k", k, start, l);
  check_append("kv_cache_append", "v_cache", v_cache, "v", v, start, l);
  detail::require_shape("kv_cache_append", "v_cache", v_cache.shape(), k_cache.shape(), l);
  const Shape tile{1, kAppendChunk, k_cache.dim(2), k_cache.dim(3)};
  auto [k_part, v_part] = detail::partition_kv(k_cache, v_cache, tile, l);
  auto [k_out, v_out, k1, v1, s1] = kv_cache_append_pair<T>(std::move(k_part), std::move(v_part),
                                                            Tensor<T>(k), Tensor<T>(v), start)
                                        .sync();
  k_cache = std::move(k_out).unpartition();
  v_cache = std::move(v_out).unpartition();
}

#define TESSERA_LAYOUT(T)                                                                      \
  template Tensor<T, 3> split_heads(const Tensor<T, 2>&, int64_t, std::source_location);       \
  template Tensor<T, 3> split_heads(const Tensor<T, 2>&, int64_t, int64_t, int64_t,            \
                                    std::source_location);                                     \
  template Tensor<T, 2> merge_heads(const Tensor<T, 3>&, std::source_location);                \
  template Tensor<T, 4> kv_cache_write(const Tensor<T, 4>&, const Tensor<T, 3>&, int64_t,      \
                                       std::source_location);                                  \
  template Tensor<T, 4> kv_cache_write(const Tensor<T, 4>&, const Tensor<T, 4>&, int64_t,      \
                                       std::source_location);                                  \
  template void kv_cache_append(Tensor<T, 4>&, const Tensor<T, 3>&, const Tensor<int32_t, 1>&, \
                                std::source_location);                                         \
  template void kv_cache_append(Tensor<T, 4>&, const Tensor<T, 4>&, const Tensor<int32_t, 1>&, \
                                std::source_location);                                         \
  template void kv_cache_append(Tensor<T, 4>&, Tensor<T, 4>&, const Tensor<T, 3>&,             \
                                const Tensor<T, 3>&, const Tensor<int32_t, 1>&,                \
                                std::source_location);                                         \
  template void kv_cache_append(Tensor<T, 4>&, Tensor<T, 4>&, const Tensor<T, 4>&,             \
                                const Tensor<T, 4>&, const Tensor<int32_t, 1>&,                \
                                std::source_location);
TESSERA_LAYOUT(float)
TESSERA_LAYOUT(half)
TESSERA_LAYOUT(bfloat16)

}  // namespace tessera::kernels

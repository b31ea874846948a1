// Embedding lookup and argmax: the first and the last kernel of a decoder step.
//
// The lookup is a gather written in the safe DSL: each block owns one output row, reads its token
// id, and uses that value as the tile coordinate of its load from the table. A load may read
// anywhere (reads cannot race); the store still goes only to the block's own row. The load is
// unpadded, so an id outside the table is a BoundsError instead of a row of zeros.
//
// argmax walks a row in chunks of kChunk with a loop-carried (best value, best index). The DSL has
// no argmax reduction yet, so a chunk's index is found in two reductions: its max, then the
// smallest column holding that max (or a NaN).
#include <climits>

#include "host.hpp"
#include "tessera/kernels/elementwise.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

template <Element T>
TESSERA_KERNEL(embedding_rows, Out<T, 2> y, In<T, 2> table, In<int32_t, 1> ids) {
  const int64_t dim = y.shape()[1];
  const Index id = load(ids, {tile_index(0)}, {1}, Pad::none()).reshape({});
  y.store(load(table, {id, 0}, {1, dim}, Pad::none()));
};

constexpr int kChunk = 1024;

template <Element T>
TESSERA_KERNEL(argmax_rows, Out<int32_t, 1> out, In<T, 2> x) {
  const Index row = tile_index(0);
  const Index chunks = ((x.dim(1) + (kChunk - 1)) / kChunk).template cast<int32_t>();
  Tile<float> best = Tile<float>::full({}, -INFINITY);
  Index best_index = Index::zeros({});
  for_range(0, chunks, [&](Index c) {
    const Tile<float> v = load(x, {row, c}, {1, kChunk}, Pad::neg_inf()).template cast<float>();
    const Tile<float> m = max(v, 1);  // NaN when the chunk holds one
    const Index column = iota<int32_t>({1, kChunk}, 1) + c * kChunk;
    const Index first = min(select((v == m) | (v != v), column, INT32_MAX), 1).reshape({});
    const Tile<float> top = m.reshape({});
    // Strictly larger (ties keep the earlier chunk), or the first NaN after numbers.
    const Tile<bool> take = (top > best) | ((top != top) & (best == best));
    best_index = select(take, first, best_index);
    best = select(take, top, best);
  });
  out.store(best_index.reshape({1}));
};

}  // namespace

template <Element T>
Tensor<T, 2> embedding(const Tensor<T, 2>& table, const Tensor<int32_t, 1>& ids,
                       std::source_location l) {
  detail::require_nonempty("embedding", "table", table.shape(), 2, l);
  detail::require_same_device("embedding", "ids", ids.device(), table.device(), l);
  const int64_t n = ids.dim(0), dim = table.dim(1);
  if (n == 0) return detail::new_tensor<T, 2>({0, dim}, table.device(), l);
  auto [y, t1, i1] =
      embedding_rows<T>(detail::new_tensor<T, 2>({n, dim}, table.device(), l).partition({1, dim}),
                        table, ids)
          .sync();
  return std::move(y).unpartition();
}

template <Element T>
Tensor<int32_t, 1> argmax(const Tensor<T, 2>& x, std::source_location l) {
  detail::require_nonempty("argmax", "x", x.shape(), 2, l);
  auto [y, x1] =
      argmax_rows<T>(detail::new_tensor<int32_t, 1>({x.dim(0)}, x.device(), l).partition({1}), x)
          .sync();
  return std::move(y).unpartition();
}

#define TESSERA_LOOKUP(T)                                                         \
  template Tensor<T, 2> embedding(const Tensor<T, 2>&, const Tensor<int32_t, 1>&, \
                                  std::source_location);                          \
  template Tensor<int32_t, 1> argmax(const Tensor<T, 2>&, std::source_location);
TESSERA_LOOKUP(float)
TESSERA_LOOKUP(half)
TESSERA_LOOKUP(bfloat16)

}  // namespace tessera::kernels

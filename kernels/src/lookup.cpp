// Embedding lookup and argmax: the first and the last kernel of a decoder step.
//
// The lookup is a gather written in the safe DSL: each block owns one output row, reads its token
// id, and uses that value as the tile coordinate of its load from the table. A load may read
// anywhere (reads cannot race); the store still goes only to the block's own row. The load is
// unpadded, so an id outside the table is a BoundsError instead of a row of zeros.
//
// argmax walks a row in chunks of kChunk with a loop-carried (best value, best index). The DSL has
// no argmax reduction yet, so a chunk's index is found in two reductions: its max, then the
// smallest column holding that max (or a NaN). A long row is split over blocks, then combined.
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
// A row longer than kPartChunks chunks is split over blocks: each finds the (value, index) of its
// part, and a second kernel picks among the parts in order (a 152k-column LM head row is 38 blocks
// instead of one walking 149 chunks).
constexpr int kPartChunks = 4;

// The best (value, index) of chunks [first, end) of row `row`: the max, the first index holding it,
// a NaN counting as larger than any number.
template <Element T>
void scan_chunks(const In<T, 2>& x, const Index& row, const Index& first, const Index& end,
                 Tile<float>& best, Index& best_index) {
  for_range(first, end, [&](Index c) {
    const Tile<float> v = load(x, {row, c}, {1, kChunk}, Pad::neg_inf()).template cast<float>();
    const Tile<float> m = max(v, 1);  // NaN when the chunk holds one
    const Index column = iota<int32_t>({1, kChunk}, 1) + c * kChunk;
    const Index first_col = min(select((v == m) | (v != v), column, INT32_MAX), 1).reshape({});
    const Tile<float> top = m.reshape({});
    // Strictly larger (ties keep the earlier chunk), or the first NaN after numbers.
    const Tile<bool> take = (top > best) | ((top != top) & (best == best));
    best_index = select(take, first_col, best_index);
    best = select(take, top, best);
  });
}

template <Element T>
TESSERA_KERNEL(argmax_rows, Out<int32_t, 1> out, In<T, 2> x) {
  const Index chunks = ((x.dim(1) + (kChunk - 1)) / kChunk).template cast<int32_t>();
  Tile<float> best = Tile<float>::full({}, -INFINITY);
  Index best_index = Index::zeros({});
  scan_chunks(x, tile_index(0), Index::zeros({}), chunks, best, best_index);
  out.store(best_index.reshape({1}));
};

template <Element T>
TESSERA_KERNEL(argmax_parts, Out<float, 2> part_best, Out<int32_t, 2> part_index, In<T, 2> x) {
  const Index part = tile_index(1);
  const Index chunks = ((x.dim(1) + (kChunk - 1)) / kChunk).template cast<int32_t>();
  Tile<float> best = Tile<float>::full({}, -INFINITY);
  Index best_index = Index::zeros({});
  scan_chunks(x, tile_index(0), part * kPartChunks, minimum((part + 1) * kPartChunks, chunks), best,
              best_index);
  part_best.store(best.reshape({1, 1}));
  part_index.store(best_index.reshape({1, 1}));
};

TESSERA_KERNEL(argmax_combine, Out<int32_t, 1> out, In<float, 2> part_best,
               In<int32_t, 2> part_index) {
  const Index row = tile_index(0);
  const Index parts = part_best.dim(1).template cast<int32_t>();
  Tile<float> best = Tile<float>::full({}, -INFINITY);
  Index best_index = Index::zeros({});
  for_range(0, parts, [&](Index p) {
    const Tile<float> top = load(part_best, {row, p}, {1, 1}).reshape({});
    const Index at = load(part_index, {row, p}, {1, 1}).reshape({});
    const Tile<bool> take = (top > best) | ((top != top) & (best == best));
    best_index = select(take, at, best_index);
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
  const int64_t parts = ceil_div(x.dim(1), int64_t{kChunk} * kPartChunks);
  if (parts > 1) {
    auto [best, index, x1] =
        argmax_parts<T>(
            detail::new_tensor<float, 2>({x.dim(0), parts}, x.device(), l).partition({1, 1}),
            detail::new_tensor<int32_t, 2>({x.dim(0), parts}, x.device(), l).partition({1, 1}), x)
            .sync();
    auto [y, b1, i1] =
        argmax_combine(detail::new_tensor<int32_t, 1>({x.dim(0)}, x.device(), l).partition({1}),
                       std::move(best).unpartition(), std::move(index).unpartition())
            .sync();
    return std::move(y).unpartition();
  }
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

// store_part: a block writes its own tile in pieces. Column chunks in a loop (the shape of a norm
// over a row longer than one register tile) must give the whole tile; and a piece at a run-time
// offset that reaches past the block's tile on any side (negative offsets, offsets past the end)
// must land only where it overlaps the tile: what falls outside is dropped, so the neighbours'
// tiles keep the zeros their own blocks stored (the output is poisoned before the launch).
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

constexpr int kChunks = 4;

// z = 2 x, the [TM, TN] tile written as kChunks column pieces of [TM, TN / kChunks], each read
// with load_at.
template <Element T>
TESSERA_KERNEL(chunked_copy, Out<T> z, In<T> x) {
  const Shape& s = z.shape();
  const int32_t cn = static_cast<int32_t>(s[1]) / kChunks;
  const Index r = tile_index(0) * static_cast<int32_t>(s[0]);
  const Index c0 = tile_index(1) * static_cast<int32_t>(s[1]);
  for_range(0, kChunks, [&](Index c) {
    const Tile<T> piece = load_at(x, {r, c0 + c * cn}, {s[0], cn});
    z.store_part(piece * T(2), {0, c * cn});
  });
};

template <Element T>
void run_chunked(Rng& rng) {
  const Shape tile{4, 64};
  const Shape shape{rng.ragged(4, 3), rng.ragged(64, 3)};
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -50, 50);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  (void)chunked_copy<T>(z.view().partition(tile), x.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return 2 * x.at(i); }, 0);
}

// Zeros, then a [TM / 2, TN / 2] piece of x at (dr, dc) within the block's [TM, TN] tile; the
// piece holds the elements of x that it covers.
template <Element T>
TESSERA_KERNEL(piece_at_offset, Out<T> z, In<T> x, Scalar<int32_t> dr, Scalar<int32_t> dc) {
  const Shape& s = z.shape();
  const Shape half{s[0] / 2, s[1] / 2};
  z.store(Tile<T>::zeros(s));
  const Index r = tile_index(0) * static_cast<int32_t>(s[0]) + dr;
  const Index c = tile_index(1) * static_cast<int32_t>(s[1]) + dc;
  z.store_part(load_at(x, {r, c}, half), {dr, dc});
};

template <Element T>
void run_piece(Rng& rng) {
  const Shape tile{8, 32}, piece{4, 16};
  const Shape shape{rng.ragged(8, 3), rng.ragged(32, 3)};
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -50, 50);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  const auto dr = static_cast<int32_t>(rng.integer(-6, 10));
  const auto dc = static_cast<int32_t>(rng.integer(-20, 36));
  (void)piece_at_offset<T>(z.view().partition(tile), x.view(), dr, dc).sync();
  expect_matches(
      z,
      [&](const Shape& i) {
        const int64_t lr = i[0] % tile[0] - dr, lc = i[1] % tile[1] - dc;  // within the piece
        return lr >= 0 && lc >= 0 && lr < piece[0] && lc < piece[1] ? x.at(i) : 0.0;
      },
      0);
}

template <Element... Ts>
void add_rows(std::vector<Case>& rows) {
  (rows.push_back({"column_chunks_in_a_loop_" + dtype_tag<Ts>(), run_chunked<Ts>}), ...);
  (rows.push_back(
       {"piece_at_run_time_offset_is_clipped_to_the_tile_" + dtype_tag<Ts>(), run_piece<Ts>}),
   ...);
}

std::vector<Case> store_part_rows() {
  std::vector<Case> rows;
  add_rows<float, half, bfloat16, int32_t, int8_t, double>(rows);
  return rows;
}

TESSERA_OP_CASES(StorePart, store_part_rows());

}  // namespace
}  // namespace tessera::test

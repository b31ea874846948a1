// expect-error: a for_range bound or step, or a load coordinate, must be an Index
// expect-error: x.dim(axis) is an i64 extent: turn it into an i32 count first
// expect-at-most-lines: 30
// A loop runs to a tensor's i64 extent, which is not an Index.
#include <tessera/tessera.hpp>

using namespace tessera::tile;

TESSERA_KERNEL(row_total, Out<float> z, In<float> x) {
  Tile<float> acc = Tile<float>::zeros({1, 16});
#ifdef TESSERA_COMPILE_FAIL
  for_range(0, x.dim(1) / 16, [&](Index k) {
#else
  for_range(0, cast<int32_t>(x.dim(1) / 16), [&](Index k) {
#endif
    acc = acc + load(x, {tile_index(0), k}, {1, 16});
  });
  z.store(sum(acc, 1));
};

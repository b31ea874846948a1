// expect-error: a compound assignment of a tile of another element type
// expect-error: cast the right side to the left's type, e.g. acc += cast<float>(x)
// expect-at-most-lines: 30
// A loop accumulates f16 tiles into an f32 accumulator without a cast.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(row_sum, Out<float> z, In<half> x) {
  Tile<float> acc = Tile<float>::zeros({8});
  for_range(0, 4, [&](Index k) {
#ifdef TESSERA_COMPILE_FAIL
    acc += load(x, {k}, {8});
#else
    acc += cast<float>(load(x, {k}, {8}));
#endif
  });
  z.store(acc);
};

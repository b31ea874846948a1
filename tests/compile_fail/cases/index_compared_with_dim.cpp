// expect-error: a binary op on tiles of two element types
// expect-error: or cast<int32_t>(x.dim(0)) next to an Index
// expect-at-most-lines: 30
// A bounds test compares an i32 tile coordinate with an i64 extent.
#include <tessera/tessera.hpp>

using namespace tessera::tile;

TESSERA_KERNEL(guarded, Out<float> z, In<float> x) {
#ifdef TESSERA_COMPILE_FAIL
  auto inside = tile_index(0) * 8 < x.dim(0);
#else
  auto inside = tile_index(0) * 8 < cast<int32_t>(x.dim(0));
#endif
  z.store(select(inside, load_like(x, z), 0.0f));
};

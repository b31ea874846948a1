// expect-error: a floating-point constant next to an integer tile
// expect-error: cast the tile first, e.g. cast<float>(i) * 0.5f
// expect-at-most-lines: 30
// Halving an integer tile with 0.5 would truncate the constant to 0.
#include <tessera/tessera.hpp>

using namespace tessera::tile;

TESSERA_KERNEL(halves, Out<float> z, In<int32_t> x) {
#ifdef TESSERA_COMPILE_FAIL
  z.store(cast<float>(load_like(x, z) * 0.5));
#else
  z.store(cast<float>(load_like(x, z)) * 0.5f);
#endif
};

// expect-error: store() on an Accum<T> parameter: other blocks' tiles may overlap this one
// A kernel overwrites a tile of an output that every block adds into.
#include <tessera/tessera.hpp>

using namespace tessera::tile;

TESSERA_KERNEL(fold, Accum<float> h, In<float> x) {
  auto t = load(x, {tile_index(0)}, {8});
#ifdef TESSERA_COMPILE_FAIL
  h.store(t);
#else
  h.add(t, {0});
#endif
};

// expect-error: load() of an Accum<T> parameter: other blocks add into it while this one runs
// A kernel reads the running sums of an output that every block adds into.
#include <tessera/tessera.hpp>

using namespace tessera::tile;

TESSERA_KERNEL(fold, Accum<float> h, In<float> x) {
#ifdef TESSERA_COMPILE_FAIL
  auto t = load(h, {0}, {8});
#else
  auto t = load(x, {0}, {8});
#endif
  h.add(t, {tile_index(0)});
};

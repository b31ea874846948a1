// expect-error: store() on an In<T> parameter: kernel inputs are read-only
// A kernel writes one of its inputs.
#include <tessera/tessera.hpp>

using namespace tessera::tile;

TESSERA_KERNEL(scale, Out<float> z, In<float> x) {
  auto t = load_like(x, z) * 2.0f;
#ifdef TESSERA_COMPILE_FAIL
  x.store(t);
#else
  z.store(t);
#endif
};

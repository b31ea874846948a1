// expect-error: a binary op on tiles of two element types
// expect-error: cast one operand to the other's type, e.g. a + cast<float>(b)
// expect-at-most-lines: 30
// A kernel adds an f16 tile to an f32 tile without saying which precision it wants.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(add_mixed, Out<float> z, In<float> x, In<half> y) {
#ifdef TESSERA_COMPILE_FAIL
  z.store(load_like(x, z) + load_like(y, z));
#else
  z.store(load_like(x, z) + cast<float>(load_like(y, z)));
#endif
};

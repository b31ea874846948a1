// expect-error: this argument is for an Out<T> parameter, which writes disjoint tiles: pass a partition, std::move(t).partition(tile_shape), not a plain Tensor
// A plain tensor passed where the kernel writes an output.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

void run() {
  auto x = ones<float>({64});
  auto z = zeros<float>({64});
#ifdef TESSERA_COMPILE_FAIL
  auto [z1, x1] = copy(z, x).sync();
#else
  auto [z1, x1] = copy(std::move(z).partition({16}), x).sync();
#endif
}

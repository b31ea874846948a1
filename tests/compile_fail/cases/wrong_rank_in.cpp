// expect-error: the tensor's rank differs from the rank of the kernel's In<T, R> parameter
// A Tensor<float, 1> passed to an In<float, 2>.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(first_row, Out<float, 1> z, In<float, 2> x) {
  z.store(load(x, {0, z.tile_index(0)}, {1, 16}).reshape({16}));
};

void run() {
#ifdef TESSERA_COMPILE_FAIL
  auto x = ones<float>({64});
#else
  auto x = ones<float>({4, 64});
#endif
  auto [z1, x1] = first_row(zeros<float>({64}).partition({16}), x).sync();
}

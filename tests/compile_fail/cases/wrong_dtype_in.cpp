// expect-error: the tensor's element type differs from the kernel's In<T> parameter
// A Tensor<half> passed to an In<float>.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

void run() {
#ifdef TESSERA_COMPILE_FAIL
  auto x = ones<half>({64});
#else
  auto x = ones<float>({64});
#endif
  auto [z1, x1] = copy(zeros<float>({64}).partition({16}), x).sync();
}

// expect-error: wrong number of arguments for this kernel: pass one per kernel parameter
// A launch that leaves out an argument.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(add, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};

void run() {
  auto x = ones<float>({64});
  auto z = zeros<float>({64}).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  auto future = add(std::move(z), x);
#else
  auto future = add(std::move(z), x, x);
#endif
  (void)std::move(future).sync();
}

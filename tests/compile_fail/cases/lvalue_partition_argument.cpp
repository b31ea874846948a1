// expect-error: pass the partition with std::move(...): the launch owns it until the work is done, and .sync() hands it back
// A partition passed as an lvalue: the caller would keep a handle to the tiles being written.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

void run() {
  auto x = ones<float>({64});
  auto z = zeros<float>({64}).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  auto [z1, x1] = copy(z, x).sync();
#else
  auto [z1, x1] = copy(std::move(z), x).sync();
#endif
}

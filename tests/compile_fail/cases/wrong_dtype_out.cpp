// expect-error: the partition's element type differs from the kernel's Out<T> parameter
// A Partition<half> passed to an Out<float>.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

void run() {
#ifdef TESSERA_COMPILE_FAIL
  auto z = zeros<half>({64}).partition({16});
#else
  auto z = zeros<float>({64}).partition({16});
#endif
  auto [z1, x1] = copy(std::move(z), ones<float>({64})).sync();
}

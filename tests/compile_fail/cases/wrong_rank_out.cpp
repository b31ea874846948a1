// expect-error: the partition's rank differs from the rank of the kernel's Out<T, R> parameter
// A Partition<float, 2> passed to an Out<float, 1>.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(fill, Out<float, 1> z) {
  z.store(Tile<float>::zeros(z.shape()));
};

void run() {
#ifdef TESSERA_COMPILE_FAIL
  auto z = zeros<float>({8, 8}).partition({4, 4});
#else
  auto z = zeros<float>({64}).partition({16});
#endif
  auto [z1] = fill(std::move(z)).sync();
}

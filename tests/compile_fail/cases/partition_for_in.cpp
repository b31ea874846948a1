// expect-error: this argument is for an In<T> parameter, but a partition is an output; unpartition() it first to read it
// A partition (an output being written) passed where the kernel reads an input.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};

void run() {
  auto x = ones<float>({64}).partition({16});
  auto z = zeros<float>({64}).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  auto [z1, x1] = copy(std::move(z), std::move(x)).sync();
#else
  auto [z1, x1] = copy(std::move(z), std::move(x).unpartition()).sync();
#endif
}

// expect-error: this argument is for an Accum<T> parameter, which every block adds into
// A launch passes a partition (disjoint tiles) where the kernel adds into the whole tensor.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(fold, Accum<float> h, In<float> x) {
  h.add(load(x, {tile_index(0)}, {8}), {0});
};

void run() {
  auto x = ones<float>({32});
#ifdef TESSERA_COMPILE_FAIL
  (void)fold(zeros<float>({8}).partition({8}), x);
#else
  (void)fold(zeros<float>({8}).accumulate({4}), x);
#endif
}

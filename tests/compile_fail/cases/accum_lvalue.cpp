// expect-error: pass the accumulation with std::move(...)
// A launch is given an accumulation the caller keeps using.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(fold, Accum<float> h, In<float> x) {
  h.add(load(x, {tile_index(0)}, {8}), {0});
};

void run() {
  auto x = ones<float>({32});
  auto h = zeros<float>({8}).accumulate({4});
#ifdef TESSERA_COMPILE_FAIL
  (void)fold(h, x);
#else
  (void)fold(std::move(h), x);
#endif
}

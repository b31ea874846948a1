// z = x + y, one tile of 128 elements per tile block.
#include <cstdio>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

// Runs once per tile block, on this block's own tile of z. x and y are read-only.
TESSERA_KERNEL(add, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};

int main() {
  const int64_t n = 1000;  // not a multiple of the tile: the last tile is ragged
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = 0.5f * i, ys[i] = 1000.0f - 2 * i;
  auto x = from_host(xs);
  auto y = from_host(ys);
  auto z = zeros<float>({n}).partition({128});  // consumes the tensor; grid = ceil(1000/128) = 8
  auto [z1, x1, y1] = add(std::move(z), x, y).sync();
  std::vector<float> out = std::move(z1).unpartition().to_vector();
  for (int64_t i = 0; i < n; ++i) {
    const double want = double{xs[i]} + ys[i];  // exact in f32 too: halves below 2^24
    if (out[i] != want) {
      std::printf("add: wrong at %lld: %g != %g\n", static_cast<long long>(i), out[i], want);
      return 1;
    }
  }
  std::printf("add: %lld elements on %s: ok\n", static_cast<long long>(n),
              x.device().str().c_str());
  return 0;
}

// Every tile block says hello. A kernel's grid comes from the partition of its output, so this
// one has an output too: each block stores its linear id into its own 1x1x1 tile, and the host
// checks that every id landed where it belongs.
#include <cstdio>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(hello, Out<int32_t> ids) {
  const Index i = tile_index(0), j = tile_index(1), k = tile_index(2);
  const Index a = num_tiles(0), b = num_tiles(1), c = num_tiles(2);
  print("Hello, I am tile <{}, {}, {}> in a kernel with <{}, {}, {}> tiles.", i, j, k, a, b, c);
  ids.store(Tile<int32_t>::zeros(ids.shape()) + (i * b + j) * c + k);
};

int main() {
  const int64_t A = 2, B = 3, C = 2;
  auto ids = zeros<int32_t>({A, B, C}).partition({1, 1, 1});  // one tile per element: 12 blocks
  auto [ids1] = hello(std::move(ids)).sync();
  const std::vector<int32_t> got = std::move(ids1).unpartition().to_vector();
  for (int64_t n = 0; n < A * B * C; ++n)
    if (got[n] != n) {
      std::printf("hello_world: element %lld holds %d, not its block's id %lld\n",
                  static_cast<long long>(n), got[n], static_cast<long long>(n));
      return 1;
    }
  std::printf("hello_world: %lld tiles said hello: ok\n", static_cast<long long>(A * B * C));
  return 0;
}

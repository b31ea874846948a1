// A program linked with Tessera::tessera: a tile kernel launched on the default device (the CPU
// here). The test tile_program_links_codegen reads its symbols: the CUDA backend and its code
// generator are in it although nothing in it names them (the link option of Tessera::tessera).
#include <cstdio>
#include <vector>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(tile_program_twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};

int main() {
  const int64_t n = 100;
  auto [z, x] = tile_program_twice(zeros<float>({n}).partition({32}), arange<float>(n)).sync();
  const std::vector<float> got = std::move(z).unpartition().to_vector();
  for (int64_t i = 0; i < n; ++i)
    if (got[i] != 2.0f * static_cast<float>(i)) {
      std::printf("tile_program: element %lld is %g\n", static_cast<long long>(i), got[i]);
      return 1;
    }
  std::printf("tile_program: ok\n");
  return 0;
}

// c = a @ b with f16 inputs and an f32 accumulator: each block owns a BM x BN tile of c and loops
// over the K tiles, feeding mma with a loop-carried accumulator. Tile sizes are template
// parameters (trace-time constants); M, N and K are run-time values, none a multiple of its tile.
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

template <int BM, int BN, int BK>
TESSERA_KERNEL(gemm, Out<float> c, In<half> a, In<half> b) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  c.store(acc);
};

int main() {
  const int64_t M = 200, N = 150, K = 250;
  std::vector<half> as(M * K), bs(K * N);
  for (int64_t i = 0; i < M * K; ++i) as[i] = half(std::sin(0.01f * static_cast<float>(i)));
  for (int64_t i = 0; i < K * N; ++i) bs[i] = half(std::cos(0.013f * static_cast<float>(i)));
  auto c = zeros<float>({M, N}).partition({64, 64});  // grid 4 x 3, ragged on both axes
  auto [c1, a1, b1] =
      gemm<64, 64, 32>(std::move(c), from_host(as, {M, K}), from_host(bs, {K, N})).sync();
  const std::vector<float> out = std::move(c1).unpartition().to_vector();
  for (int64_t r = 0; r < M; ++r)
    for (int64_t col = 0; col < N; ++col) {
      double want = 0, magnitude = 0;
      for (int64_t k = 0; k < K; ++k) {
        const double p = static_cast<double>(static_cast<float>(as[r * K + k])) *
                         static_cast<float>(bs[k * N + col]);
        want += p;
        magnitude += std::fabs(p);
      }
      // f32 accumulation: the error grows with K, relative to the sum of |products|.
      if (std::fabs(out[r * N + col] - want) > 1e-6 * static_cast<double>(K) * magnitude) {
        std::printf("gemm: c[%lld][%lld] is %.9g, the reference is %.9g\n",
                    static_cast<long long>(r), static_cast<long long>(col), out[r * N + col], want);
        return 1;
      }
    }
  std::printf("gemm: %lldx%lldx%lld, f16 inputs, f32 accumulator, on %s: ok\n",
              static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K),
              default_device().str().c_str());
  return 0;
}

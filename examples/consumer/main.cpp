// A tile kernel in a project outside Tessera's tree: z = max(x, 0) * y, checked on the host.
#include <cstdio>
#include <vector>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(relu_mul, Out<float> z, In<float> x, In<float> y) {
  z.store(maximum(load_like(x, z), 0.0f) * load_like(y, z));
};

int main() {
  const int64_t n = 777;  // ragged: the last of the tiles of 128 is partly outside
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = static_cast<float>(i % 7) - 3.0f, ys[i] = 0.5f * i;
  const auto x = from_host(xs);
  const auto y = from_host(ys);
  auto z = zeros<float>({n}).partition({128});
  auto [z1, x1, y1] = relu_mul(std::move(z), x, y).sync();
  const std::vector<float> out = std::move(z1).unpartition().to_vector();
  for (int64_t i = 0; i < n; ++i) {
    const float want = (xs[i] > 0.0f ? xs[i] : 0.0f) * ys[i];  // one rounding: exact on both
    if (out[i] != want) {
      std::printf("consumer_tile: element %lld is %g, want %g\n", static_cast<long long>(i), out[i],
                  want);
      return 1;
    }
  }
  std::printf("consumer_tile: %lld elements on %s: ok\n", static_cast<long long>(n),
              x.device().str().c_str());
  return 0;
}

// A pipeline of four dependent kernels issued back to back, with no host wait between them:
// each launch takes what the previous one will write (Future::chain() hands its arguments back
// at once), and the runtime runs each after the one it depends on. The host waits once, when it
// reads the result. docs/async.md explains what owns what, and when.
//
//   h = 2 x          (scale)
//   g = h + b        (add)
//   r = max(g, 0)    (relu)
//   y = r + x        (add: x is read by the first launch and by this one)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(scale, Out<float> z, In<float> x, Scalar<float> a) {
  z.store(a * load_like(x, z));
};
TESSERA_KERNEL(add, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};
TESSERA_KERNEL(relu, Out<float> z, In<float> x) {
  z.store(maximum(load_like(x, z), 0.0f));
};

int main() {
  const int64_t n = 100000;  // a ragged last tile
  std::vector<float> xs(n), bs(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = std::sin(0.01f * i), bs[i] = 0.5f - 0.00001f * i;
  const auto x = from_host(xs);
  const auto b = from_host(bs);
  auto tiles = [&] { return zeros<float>({n}).partition({1024}); };

  // Each chain() returns at once: h, g and r are results still being written. Passing them on
  // orders the next launch after the one that writes them; dropping them frees them behind the
  // launches that use them.
  auto [h, x1, a] = scale(tiles(), x, 2.0f).chain();
  auto [g, h1, b1] = add(tiles(), std::move(h).unpartition(), b).chain();
  auto [r, g1] = relu(tiles(), std::move(g).unpartition()).chain();
  auto [y, r1, x2] = add(tiles(), std::move(r).unpartition(), x).sync();  // the one host wait

  const std::vector<float> out = std::move(y).unpartition().to_vector();
  for (int64_t i = 0; i < n; ++i) {
    const double want = std::max(2.0 * xs[i] + bs[i], 0.0) + xs[i];
    if (std::fabs(out[i] - want) > 1e-6 * (std::fabs(want) + 1.0)) {
      std::printf("pipeline: element %lld is %.9g, the reference is %.9g\n",
                  static_cast<long long>(i), out[i], want);
      return 1;
    }
  }
  std::printf("pipeline: 4 chained launches over %lld elements on %s: ok\n",
              static_cast<long long>(n), x.device().str().c_str());
  return 0;
}

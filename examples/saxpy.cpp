// z = a * x + y, with `a` a run-time Scalar<float>: a new value of `a` reuses the compiled kernel.
#include <cmath>
#include <cstdio>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(saxpy, Out<float> z, Scalar<float> a, In<float> x, In<float> y) {
  z.store(a * load_like(x, z) + load_like(y, z));
};

int main() {
  const int64_t n = 1000;  // not a multiple of 256: the last tile is ragged
  std::vector<float> xs(n), ys(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = std::sin(0.1f * i), ys[i] = 0.001f * i - 0.5f;
  const auto x = from_host(xs);
  const auto y = from_host(ys);
  for (const float a : {2.5f, -0.75f}) {
    auto z = zeros<float>({n}).partition({256});
    auto [z1, a1, x1, y1] = saxpy(std::move(z), a, x, y).sync();
    const std::vector<float> out = std::move(z1).unpartition().to_vector();
    for (int64_t i = 0; i < n; ++i) {
      const double want = double{a} * xs[i] + ys[i];
      // Two f32 roundings, relative to the terms.
      if (std::fabs(out[i] - want) > 1e-6 * (std::fabs(double{a} * xs[i]) + std::fabs(ys[i]))) {
        std::printf("saxpy: a = %g, element %lld is %.9g, the reference is %.9g\n", a,
                    static_cast<long long>(i), out[i], want);
        return 1;
      }
    }
  }
  std::printf("saxpy: %lld elements, two values of a, on %s: ok\n", static_cast<long long>(n),
              x.device().str().c_str());
  return 0;
}

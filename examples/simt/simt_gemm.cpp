// SIMT GEMM (shared-memory tiles, 4 x 4 outputs per thread) compiled ahead of time by nvcc.
// Checked against a double-precision host product on ragged sizes, then timed at 4096^3 with
// sampled checks. Exits non-zero when a result is wrong; prints a "skipped" line and exits 0 on a
// machine with no GPU.
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/simt/simt.hpp>
#include <tessera/tessera.hpp>

#include "example_util.hpp"
#include "gemm_kernel.hpp"

using namespace tessera;
using namespace tessera::simt;
using simt_example::gemm;
using simt_example::GemmTile;

namespace {

std::vector<float> values(int64_t n, int seed) {
  std::vector<float> v(n);
  uint32_t s = 2463534242u + seed;
  for (auto& x : v) {
    s ^= s << 13, s ^= s >> 17, s ^= s << 5;
    x = static_cast<float>(s % 2001) / 1000.0f - 1.0f;
  }
  return v;
}

LaunchConfig<2> tiles(int64_t m, int64_t n) {
  return {{{(n + GemmTile::kBlockCols - 1) / GemmTile::kBlockCols,
            (m + GemmTile::kBlockRows - 1) / GemmTile::kBlockRows}},
          {{GemmTile::kBlockX, GemmTile::kBlockY}}};
}

// |got - want| within float accumulation error for a k-long dot product of values in [-1, 1].
bool close(double got, double want, int64_t k) {
  return std::abs(got - want) <= 1e-5 * k + 1e-4;
}

double dot(const std::vector<float>& a, const std::vector<float>& b, int64_t n, int64_t k,
           int64_t r, int64_t c) {
  double s = 0;
  for (int64_t i = 0; i < k; ++i) s += static_cast<double>(a[r * k + i]) * b[i * n + c];
  return s;
}

}  // namespace

int main() {
  if (!simt_example::gpu_or_skip("simt_gemm")) return 0;
  try {
    const Device gpu = Device::cuda(0);
    const Module module = Module::embedded(gpu);

    // Every element, on sizes that leave ragged tiles along all three axes.
    {
      const int64_t m = 333, n = 250, k = 517;
      const auto as = values(m * k, 1), bs = values(k * n, 2);
      auto a = from_host<float, 2>(as, {m, k}, gpu);
      auto b = from_host<float, 2>(bs, {k, n}, gpu);
      auto c = empty<float>({m, n}, gpu);
      c = std::get<0>(prepare<gemm>(module, tiles(m, n))(std::move(c), a, b).sync());
      const std::vector<float> cs = c.to_vector();
      for (int64_t r = 0; r < m; ++r)
        for (int64_t col = 0; col < n; ++col)
          if (const double want = dot(as, bs, n, k, r, col); !close(cs[r * n + col], want, k)) {
            std::printf("simt_gemm: wrong at (%lld, %lld): %g != %g\n", static_cast<long long>(r),
                        static_cast<long long>(col), cs[r * n + col], want);
            return 1;
          }
    }

    // 4096^3, timed; 256 sampled elements checked.
    const int64_t s = 4096;
    const auto as = values(s * s, 3), bs = values(s * s, 4);
    auto a = from_host<float, 2>(as, {s, s}, gpu);
    auto b = from_host<float, 2>(bs, {s, s}, gpu);
    auto c = empty<float>({s, s}, gpu);
    const auto run = prepare<gemm>(module, tiles(s, s));
    c = std::get<0>(run(std::move(c), a, b).sync());
    const std::vector<float> cs = c.to_vector();
    for (int64_t i = 0; i < 256; ++i) {
      const int64_t r = (i * 2654435761u) % s, col = (i * 40503u + 17) % s;
      if (const double want = dot(as, bs, s, s, r, col); !close(cs[r * s + col], want, s)) {
        std::printf("simt_gemm: wrong at (%lld, %lld) of 4096^3: %g != %g\n",
                    static_cast<long long>(r), static_cast<long long>(col), cs[r * s + col], want);
        return 1;
      }
    }
    std::vector<Tensor<float, 2>> outs;
    for (int i = 0; i < 2; ++i) outs.push_back(empty<float>({s, s}, gpu));
    const double t = simt_example::seconds_per_launch(
        5, 4, [&](Tensor<float, 2> o) { return run(std::move(o), a, b); }, std::move(outs));
    std::printf(
        "simt_gemm: 333x250x517 exact check and 4096^3 sampled check on %s (%s): ok, "
        "f32 4096^3 %.2f TFLOP/s (%.2f ms)\n",
        gpu.str().c_str(), module.device_limits().name.c_str(), 2.0 * s * s * s / t / 1e12,
        t * 1e3);
    return 0;
  } catch (const tessera::Error& e) {
    std::printf("simt_gemm: %s\n", e.what());
    return 1;
  }
}

// The same work written on both paths, timed side by side on one GPU in one run: vector add
// (f32, 2^28), a row sum (8192 x 8192 f32) and an f32 GEMM (4096^3). The SIMT kernels are the
// examples' (examples/simt/*.cu, compiled ahead of time by nvcc), checked and, for vector add,
// also through raw pointers and launch_unchecked: the price of the checks. The tile kernels are
// written here. Every variant's result is checked before it is timed.
//
// Timing: back-to-back launches (the GPU never waits for the host), in rounds of `per_round`
// launches; the variants take turns round by round, so drift in clocks affects them alike; each
// row is the median over rounds. Both paths' launches own their outputs until they are done, so
// every variant runs through a LaunchRing of four outputs, the same way.
//
//   simt_vs_tile [rounds=9]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <tessera/simt/simt.hpp>
#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

#include "gemm_kernel.hpp"
#include "launch_ring.hpp"
#include "row_reduce_kernel.hpp"
#include "simt_vecadd_variants.hpp"
#include "vecadd_kernel.hpp"

using namespace tessera;

namespace kernels {
using namespace tessera::tile;

TESSERA_KERNEL(add, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};

// BR rows per block, the row walked BC columns at a time.
template <int BR, int BC>
TESSERA_KERNEL(row_sum, Out<float> out, In<float> m) {
  const Index i = out.tile_index(0);
  Tile<float> acc = Tile<float>::zeros({BR, 1});
  const Index col_tiles = ((m.dim(1) + (BC - 1)) / BC).cast<int32_t>();
  for_range(0, col_tiles, [&](Index k) { acc = acc + sum(load(m, {i, k}, {BR, BC}), 1); });
  out.store(acc.reshape({BR}));
};

template <int BM, int BN, int BK>
TESSERA_KERNEL(gemm, Out<float> c, In<float> a, In<float> b) {
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {c.tile_index(0), k}, {BM, BK}), load(b, {k, c.tile_index(1)}, {BK, BN}), acc);
  });
  c.store(acc);
};

}  // namespace kernels

namespace {

using Clock = std::chrono::steady_clock;

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& e : v) e = dist(gen);
  return v;
}

// A way to run one workload: `round(k)` queues k launches back to back and returns when the last
// has finished.
struct Variant {
  std::string name;
  std::function<void(int)> round;
  std::vector<double> seconds;  // per launch, one entry per round
};

// A launch (SIMT or tile), back to back through a LaunchRing of the outputs `outs`.
template <class Launch, class Out>
std::function<void(int)> ring_rounds(Launch launch, std::vector<Out> outs) {
  auto ring = std::make_shared<LaunchRing<Launch, Out>>(std::move(launch), std::move(outs));
  return [ring](int k) {
    for (int i = 0; i < k; ++i) ring->relaunch_oldest();
    // Every launch of the round finished: the next round (maybe another variant's) starts on an
    // idle GPU.
    runtime::gpu_synchronize(default_device());
  };
}

// `count` fresh outputs of `shape` on `gpu`, for a ring.
template <class T, size_t N>
auto fresh(Device gpu, const int64_t (&shape)[N], int count = 4) {
  std::vector<Tensor<T, static_cast<int>(N)>> v;
  for (int i = 0; i < count; ++i) v.push_back(zeros<T>(shape, gpu));
  return v;
}

// Runs the variants in turns for `rounds` rounds of `per_round` launches (after one warm-up
// round each) and prints each one's median time and rate; `units` of work per launch (bytes or
// FLOPs) and their name.
void compare(const char* title, std::vector<Variant> variants, int rounds, int per_round,
             double units, const char* unit) {
  for (auto& v : variants) v.round(per_round);
  for (int r = 0; r < rounds; ++r)
    for (auto& v : variants) {
      const auto t0 = Clock::now();
      v.round(per_round);
      v.seconds.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / per_round);
    }
  std::printf("## %s\n", title);
  double first = 0;
  for (auto& v : variants) {
    std::sort(v.seconds.begin(), v.seconds.end());
    const double s = v.seconds[v.seconds.size() / 2];
    if (first == 0) first = s;
    std::printf("%-44s %10.1f us %10.1f %s  (%.3fx the first row's time)\n", v.name.c_str(), s * 1e6,
                units / s / 1e9, unit, s / first);
  }
  std::fflush(stdout);
}

int failures = 0;
void expect_close(const char* what, const std::vector<float>& got, const std::vector<double>& want,
                  double tol) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      std::printf("%s: wrong at %zu: %.9g, the reference is %.9g\n", what, i, got[i], want[i]);
      ++failures;
      return;
    }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 9;
  std::string why;
  if (!runtime::gpu_usable(&why)) {
    std::printf("# simt_vs_tile: no usable GPU (%s)\n", why.c_str());
    return 0;
  }
  const Device gpu = Device::cuda(0);
  const simt::Module aot = simt::Module::embedded(gpu);
  std::printf("# simt_vs_tile on %s (%s)\n", gpu.str().c_str(), aot.device_limits().name.c_str());

  {  // Vector add, f32, 2^28 elements: 3 x 4 bytes each.
    const int64_t n = int64_t{1} << 28;
    const auto xs = random_values(n, 1), ys = random_values(n, 2);
    auto x = from_host<float, 1>(xs, {n}, gpu);
    auto y = from_host<float, 1>(ys, {n}, gpu);
    auto z = zeros<float>({n}, gpu);
    const auto checked = simt::prepare<simt_example::vecadd>(aot, simt::cover(n, 256));
    const auto get_or = simt::prepare<simt_bench::vecadd_get_or>(aot, simt::cover(n, 256));
    const auto inputs_unchecked =
        simt::prepare<simt_bench::vecadd_inputs_unchecked>(aot, simt::cover(n, 256));
    const auto predicated = simt::prepare<simt_bench::vecadd_predicated>(aot, simt::cover(n, 256));
    const auto faulting = simt::prepare<simt_bench::vecadd_faulting>(aot, simt::cover(n, 256));
    simt::RawLaunchConfig raw;
    raw.grid[0] = static_cast<unsigned>((n + 255) / 256);
    raw.block[0] = 256;
    auto tile_add = [&](Partition<float, 1> out) { return kernels::add(std::move(out), x, y); };
    std::vector<Partition<float, 1>> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(zeros<float>({n}, gpu).partition({8192}));

    // Each result against the host's sum (the same float addition: exact).
    std::vector<double> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[i] = xs[i] + ys[i];
    // (Each variant's output is cleared first, so that none passes on another's result.)
    auto check = [&](const char* what, auto launch) {
      z = zeros<float>({n}, gpu);
      z = std::get<0>(launch(std::move(z)).sync());
      expect_close(what, z.to_vector(), want, 0);
    };
    auto with = [&](const auto& prepared) {
      return [&prepared, &x, &y](Tensor<float, 1> out) { return prepared(std::move(out), x, y); };
    };
    auto raw_add = [&](Tensor<float, 1> out) {
      return simt::launch_unchecked<simt_example::vecadd_raw>(aot, raw, std::move(out), x, y, n);
    };
    check("simt vecadd (checked)", with(checked));
    check("simt vecadd (raw)", raw_add);
    check("simt vecadd (get_or)", with(get_or));
    check("simt vecadd (inputs unchecked)", with(inputs_unchecked));
    check("simt vecadd (predicated)", with(predicated));
    check("simt vecadd (faulting)", with(faulting));
    auto [t0, x0, y0] = tile_add(zeros<float>({n}, gpu).partition({8192})).sync();
    expect_close("tile add", std::move(t0).unpartition().to_vector(), want, 0);

    std::vector<Variant> v;
    v.push_back({"simt vecadd f32 2^28, raw unchecked", ring_rounds(raw_add, fresh<float>(gpu, {n})), {}});
    v.push_back({"simt vecadd f32 2^28, checked", ring_rounds(with(checked), fresh<float>(gpu, {n})), {}});
    v.push_back({"simt vecadd f32 2^28, inputs by get_or", ring_rounds(with(get_or), fresh<float>(gpu, {n})), {}});
    v.push_back({"simt vecadd f32 2^28, inputs unchecked",
                 ring_rounds(with(inputs_unchecked), fresh<float>(gpu, {n})), {}});
    v.push_back({"simt vecadd f32 2^28, inputs by predicated loads",
                 ring_rounds(with(predicated), fresh<float>(gpu, {n})), {}});
    v.push_back({"simt vecadd f32 2^28, inputs by faulting loads",
                 ring_rounds(with(faulting), fresh<float>(gpu, {n})), {}});
    v.push_back({"tile add f32 2^28", ring_rounds(tile_add, std::move(outs)), {}});
    compare("vector add", std::move(v), rounds, 20, 3.0 * 4 * n, "GB/s");
  }

  {  // Row sums of an 8192 x 8192 f32 matrix: reads 4 bytes an element.
    const int64_t rows = 8192, cols = 8192;
    const auto ms = random_values(rows * cols, 3);
    auto m = from_host<float, 2>(ms, {rows, cols}, gpu);
    auto out = zeros<float>({rows}, gpu);
    const auto simt_sum = simt::prepare<simt_example::row_sum>(aot, simt::cover(rows * 32, 256));
    auto tile_sum = [&](Partition<float, 1> o) { return kernels::row_sum<4, 2048>(std::move(o), m); };
    std::vector<double> want(static_cast<size_t>(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) want[r] += ms[r * cols + c];
    auto simt_sum_into = [&](Tensor<float, 1> o) { return simt_sum(std::move(o), m); };
    out = std::get<0>(simt_sum_into(std::move(out)).sync());
    expect_close("simt row_sum", out.to_vector(), want, 1e-4);
    auto [s0, m0] = tile_sum(zeros<float>({rows}, gpu).partition({4})).sync();
    expect_close("tile row_sum", std::move(s0).unpartition().to_vector(), want, 1e-4);

    std::vector<Partition<float, 1>> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(zeros<float>({rows}, gpu).partition({4}));
    std::vector<Variant> v;
    v.push_back({"simt row_sum f32 8192x8192 (warp shuffles)", ring_rounds(simt_sum_into, fresh<float>(gpu, {rows})), {}});
    v.push_back({"tile row_sum f32 8192x8192", ring_rounds(tile_sum, std::move(outs)), {}});
    compare("row sum", std::move(v), rounds, 20, 4.0 * rows * cols, "GB/s");
  }

  {  // GEMM, f32 inputs and accumulator, 4096^3: 2 * 4096^3 FLOPs.
    const int64_t s = 4096;
    const auto as = random_values(s * s, 4), bs = random_values(s * s, 5);
    auto a = from_host<float, 2>(as, {s, s}, gpu);
    auto b = from_host<float, 2>(bs, {s, s}, gpu);
    auto c = zeros<float>({s, s}, gpu);
    using simt_example::GemmTile;
    const simt::LaunchConfig<2> grid{{{s / GemmTile::kBlockCols, s / GemmTile::kBlockRows}},
                                     {{GemmTile::kBlockX, GemmTile::kBlockY}}};
    const auto simt_gemm = simt::prepare<simt_example::gemm>(aot, grid);
    auto tile_gemm = [&](Partition<float, 2> o) { return kernels::gemm<64, 64, 16>(std::move(o), a, b); };
    // Sampled checks: 64 elements against double-precision dot products.
    auto sample_check = [&](const char* what, const std::vector<float>& got) {
      std::vector<float> g;
      std::vector<double> w;
      for (int64_t t = 0; t < 64; ++t) {
        const int64_t r = (t * 977) % s, col = (t * 1499 + 7) % s;
        double d = 0;
        for (int64_t k = 0; k < s; ++k) d += static_cast<double>(as[r * s + k]) * bs[k * s + col];
        g.push_back(got[r * s + col]);
        w.push_back(d);
      }
      expect_close(what, g, w, 1e-3);
    };
    auto simt_gemm_into = [&](Tensor<float, 2> o) { return simt_gemm(std::move(o), a, b); };
    c = std::get<0>(simt_gemm_into(std::move(c)).sync());
    sample_check("simt gemm", c.to_vector());
    auto [c0, a0, b0] = tile_gemm(zeros<float>({s, s}, gpu).partition({64, 64})).sync();
    sample_check("tile gemm", std::move(c0).unpartition().to_vector());

    std::vector<Partition<float, 2>> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(zeros<float>({s, s}, gpu).partition({64, 64}));
    std::vector<Variant> v;
    v.push_back({"simt gemm f32 4096^3 (64x64 tiles, 4x4/thread)", ring_rounds(simt_gemm_into, fresh<float>(gpu, {s, s}, 2)), {}});
    v.push_back({"tile gemm f32 4096^3 (64x64x16)", ring_rounds(tile_gemm, std::move(outs)), {}});
    compare("gemm", std::move(v), std::max(3, rounds / 3), 3, 2.0 * s * s * s, "GFLOP/s");
  }
  return failures == 0 ? 0 : 1;
}

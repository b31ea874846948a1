// The same work written on both paths, timed side by side on one GPU in one run: vector add
// (f32, 2^28), a row sum (8192 x 8192 f32) and an f32 GEMM (4096^3). The SIMT kernels are the
// examples' (examples/simt/*.cu, compiled ahead of time by nvcc), checked and, for vector add,
// also through raw pointers and launch_unchecked: the price of the checks. The tile kernels are
// written here. Every variant's result is checked before it is timed.
//
// Timing: back-to-back launches (the GPU never waits for the host), in rounds of `per_round`
// launches; the variants take turns round by round, so drift in clocks affects them alike; each
// row is the median over rounds.
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

// A SIMT launch queued `k` times, then the device waited for.
std::function<void(int)> simt_rounds(Device gpu, std::function<void()> enqueue) {
  return [gpu, enqueue = std::move(enqueue)](int k) {
    for (int i = 0; i < k; ++i) enqueue();
    runtime::gpu_synchronize(gpu);
  };
}

// A tile launch, back to back through a LaunchRing of the outputs `outs`.
template <class Launch, class Out>
std::function<void(int)> tile_rounds(Launch launch, std::vector<Out> outs) {
  auto ring = std::make_shared<LaunchRing<Launch, Out>>(std::move(launch), std::move(outs));
  return [ring](int k) {
    for (int i = 0; i < k; ++i) ring->relaunch_oldest();
    // Every launch of the round finished: the next round (maybe another variant's) starts on an
    // idle GPU, as a SIMT round does.
    runtime::gpu_synchronize(default_device());
  };
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
    auto z = empty<float>({n}, gpu);
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
    checked(z, x, y);
    expect_close("simt vecadd (checked)", z.to_vector(), want, 0);
    simt::launch_unchecked<simt_example::vecadd_raw>(aot, raw, z, x, y, n);
    expect_close("simt vecadd (raw)", z.to_vector(), want, 0);
    get_or(z, x, y);
    expect_close("simt vecadd (get_or)", z.to_vector(), want, 0);
    inputs_unchecked(z, x, y);
    expect_close("simt vecadd (inputs unchecked)", z.to_vector(), want, 0);
    predicated(z, x, y);
    expect_close("simt vecadd (predicated)", z.to_vector(), want, 0);
    faulting(z, x, y);
    expect_close("simt vecadd (faulting)", z.to_vector(), want, 0);
    auto [t0, x0, y0] = tile_add(zeros<float>({n}, gpu).partition({8192})).sync();
    expect_close("tile add", std::move(t0).unpartition().to_vector(), want, 0);

    std::vector<Variant> v;
    v.push_back({"simt vecadd f32 2^28, raw unchecked",
                 simt_rounds(gpu, [&] { simt::enqueue_unchecked<simt_example::vecadd_raw>(aot, raw, z, x, y, n); }), {}});
    v.push_back({"simt vecadd f32 2^28, checked", simt_rounds(gpu, [&] { checked.enqueue(z, x, y); }), {}});
    v.push_back({"simt vecadd f32 2^28, inputs by get_or", simt_rounds(gpu, [&] { get_or.enqueue(z, x, y); }), {}});
    v.push_back({"simt vecadd f32 2^28, inputs unchecked",
                 simt_rounds(gpu, [&] { inputs_unchecked.enqueue(z, x, y); }), {}});
    v.push_back({"simt vecadd f32 2^28, inputs by predicated loads",
                 simt_rounds(gpu, [&] { predicated.enqueue(z, x, y); }), {}});
    v.push_back({"simt vecadd f32 2^28, inputs by faulting loads",
                 simt_rounds(gpu, [&] { faulting.enqueue(z, x, y); }), {}});
    v.push_back({"tile add f32 2^28", tile_rounds(tile_add, std::move(outs)), {}});
    compare("vector add", std::move(v), rounds, 20, 3.0 * 4 * n, "GB/s");
  }

  {  // Row sums of an 8192 x 8192 f32 matrix: reads 4 bytes an element.
    const int64_t rows = 8192, cols = 8192;
    const auto ms = random_values(rows * cols, 3);
    auto m = from_host<float, 2>(ms, {rows, cols}, gpu);
    auto out = empty<float>({rows}, gpu);
    const auto simt_sum = simt::prepare<simt_example::row_sum>(aot, simt::cover(rows * 32, 256));
    auto tile_sum = [&](Partition<float, 1> o) { return kernels::row_sum<4, 2048>(std::move(o), m); };
    std::vector<double> want(static_cast<size_t>(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) want[r] += ms[r * cols + c];
    simt_sum(out, m);
    expect_close("simt row_sum", out.to_vector(), want, 1e-4);
    auto [s0, m0] = tile_sum(zeros<float>({rows}, gpu).partition({4})).sync();
    expect_close("tile row_sum", std::move(s0).unpartition().to_vector(), want, 1e-4);

    std::vector<Partition<float, 1>> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(zeros<float>({rows}, gpu).partition({4}));
    std::vector<Variant> v;
    v.push_back({"simt row_sum f32 8192x8192 (warp shuffles)", simt_rounds(gpu, [&] { simt_sum.enqueue(out, m); }), {}});
    v.push_back({"tile row_sum f32 8192x8192", tile_rounds(tile_sum, std::move(outs)), {}});
    compare("row sum", std::move(v), rounds, 20, 4.0 * rows * cols, "GB/s");
  }

  {  // GEMM, f32 inputs and accumulator, 4096^3: 2 * 4096^3 FLOPs.
    const int64_t s = 4096;
    const auto as = random_values(s * s, 4), bs = random_values(s * s, 5);
    auto a = from_host<float, 2>(as, {s, s}, gpu);
    auto b = from_host<float, 2>(bs, {s, s}, gpu);
    auto c = empty<float>({s, s}, gpu);
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
    simt_gemm(c, a, b);
    sample_check("simt gemm", c.to_vector());
    auto [c0, a0, b0] = tile_gemm(zeros<float>({s, s}, gpu).partition({64, 64})).sync();
    sample_check("tile gemm", std::move(c0).unpartition().to_vector());

    std::vector<Partition<float, 2>> outs;
    for (int i = 0; i < 4; ++i) outs.push_back(zeros<float>({s, s}, gpu).partition({64, 64}));
    std::vector<Variant> v;
    v.push_back({"simt gemm f32 4096^3 (64x64 tiles, 4x4/thread)", simt_rounds(gpu, [&] { simt_gemm.enqueue(c, a, b); }), {}});
    v.push_back({"tile gemm f32 4096^3 (64x64x16)", tile_rounds(tile_gemm, std::move(outs)), {}});
    compare("gemm", std::move(v), std::max(3, rounds / 3), 3, 2.0 * s * s * s, "GFLOP/s");
  }
  return failures == 0 ? 0 : 1;
}

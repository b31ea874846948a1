// SIMT vector add, compiled both ways: vecadd ahead of time by nvcc (vecadd.cu), and saxpy from a
// source string by NVRTC at run time. Each result is checked on the host; exits non-zero when one
// is wrong, and prints a "skipped" line and exits 0 on a machine with no GPU.
#include <cstdio>
#include <vector>

#include <tessera/simt/simt.hpp>
#include <tessera/tessera.hpp>

#include "example_util.hpp"
#include "vecadd_kernel.hpp"

using namespace tessera;
using namespace tessera::simt;

// Declared on the host like any checked kernel; its body is compiled at run time.
TESSERA_SIMT_KERNEL(saxpy, Index1D i, DisjointSpan<float> out, float a, Span<const float> x,
                    Span<const float> y) {
  return contract<1>().block_exactly(256).require(size<"x"> == size<"out">,
                                                  size<"y"> == size<"out">);
};

constexpr const char* kSaxpySource = R"(
using namespace tessera::simt;
TESSERA_SIMT_DEFINE(saxpy, Index1D i, DisjointSpan<float> out, float a, Span<const float> x,
                    Span<const float> y) {
  if (auto o = out.at(i)) *o = a * x[i] + y[i];
}
)";

int main() {
  if (!simt_example::gpu_or_skip("simt_vecadd")) return 0;
  try {
    const Device gpu = Device::cuda(0);
    const int64_t n = (int64_t{1} << 24) + 3;  // not a multiple of the block
    std::vector<float> xs(n), ys(n);
    for (int64_t i = 0; i < n; ++i) xs[i] = 0.5f * (i % 1000), ys[i] = 1000.0f - 2.0f * (i % 777);
    auto x = from_host<float, 1>(xs, {n}, gpu);
    auto y = from_host<float, 1>(ys, {n}, gpu);
    auto z = empty<float>({n}, gpu);

    // Ahead of time: the checked launch, prepared once against the contract and the device. The
    // launch owns z (moved in) until the GPU is done; sync() hands it back.
    const auto add = prepare<simt_example::vecadd>(Module::embedded(gpu), cover(n, 256));
    z = std::get<0>(add(std::move(z), x, y).sync());
    const std::vector<float> zs = z.to_vector();
    for (int64_t i = 0; i < n; ++i)
      if (zs[i] != xs[i] + ys[i]) {
        std::printf("simt_vecadd: wrong at %lld: %g != %g\n", static_cast<long long>(i), zs[i],
                    xs[i] + ys[i]);
        return 1;
      }
    auto outs = [&] {
      std::vector<Tensor<float, 1>> v;
      for (int i = 0; i < 3; ++i) v.push_back(empty<float>({n}, gpu));
      return v;
    };
    const double t = simt_example::seconds_per_launch(
        10, 20, [&](Tensor<float, 1> out) { return add(std::move(out), x, y); }, outs());
    // The raw-pointer version of the same work: the price of the checks, if any.
    const Module aot = Module::embedded(gpu);
    RawLaunchConfig raw;
    raw.grid[0] = (n + 255) / 256;
    raw.block[0] = 256;
    const double t_raw = simt_example::seconds_per_launch(
        10, 20,
        [&](Tensor<float, 1> out) {
          return launch_unchecked<simt_example::vecadd_raw>(aot, raw, std::move(out), x, y, n);
        },
        outs());

    // At run time: NVRTC compiles the source for this GPU's exact architecture.
    const Module jit = Module::nvrtc<saxpy>(kSaxpySource, "saxpy.cu", gpu);
    z = std::get<0>(prepare<saxpy>(jit, cover(n, 256))(std::move(z), 3.0f, x, y).sync());
    const std::vector<float> ss = z.to_vector();
    for (int64_t i = 0; i < n; ++i)
      if (ss[i] != 3.0f * xs[i] + ys[i]) {
        std::printf("simt_vecadd: saxpy wrong at %lld: %g != %g\n", static_cast<long long>(i),
                    ss[i], 3.0f * xs[i] + ys[i]);
        return 1;
      }

    std::printf(
        "simt_vecadd: %lld elements on %s (%s): ok; checked vecadd %.1f GB/s (%.1f us), "
        "raw-pointer unchecked %.1f GB/s (%.1f us); NVRTC saxpy ok\n",
        static_cast<long long>(n), gpu.str().c_str(), aot.device_limits().name.c_str(),
        3.0 * 4 * n / t / 1e9, t * 1e6, 3.0 * 4 * n / t_raw / 1e9, t_raw * 1e6);
    return 0;
  } catch (const tessera::Error& e) {
    std::printf("simt_vecadd: %s\n", e.what());
    return 1;
  }
}

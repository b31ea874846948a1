// A SIMT kernel compiled ahead of time in a project outside Tessera's tree, launched through its
// checked contract and checked on the host. Needs a GPU; prints "skipped" and exits 0 without one.
#include <cstdio>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/simt/simt.hpp>
#include <tessera/tessera.hpp>

#include "simt_scale.cuh"

int main() {
  using namespace tessera;
  using namespace tessera::simt;
  std::string why;
  if (!runtime::gpu_usable(&why)) {
    std::printf("consumer_simt: skipped: SIMT kernels need a CUDA GPU (%s)\n", why.c_str());
    return 0;
  }
  const Device gpu = Device::cuda(0);
  const int64_t n = 1000;
  std::vector<float> xs(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = 0.25f * i;
  const auto x = from_host<float, 1>(xs, {n}, gpu);
  const auto scale = prepare<consumer::scale>(Module::embedded(gpu), cover(n, 256));
  const std::vector<float> got =
      std::get<0>(scale(empty<float>({n}, gpu), 4.0f, x).sync()).to_vector();
  for (int64_t i = 0; i < n; ++i)
    if (got[i] != 4.0f * xs[i]) {  // a power of two: exact
      std::printf("consumer_simt: element %lld is %g, want %g\n", static_cast<long long>(i), got[i],
                  4.0f * xs[i]);
      return 1;
    }
  std::printf("consumer_simt: %lld elements: ok\n", static_cast<long long>(n));
  return 0;
}

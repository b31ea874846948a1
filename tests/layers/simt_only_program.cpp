// A program linked with Tessera::simt only (tessera_simt), as a SIMT user's is: a kernel compiled
// from source by NVRTC, launched through its checked contract and checked on the host. The test
// simt_program_links_no_codegen reads its symbols: no code generator in it. Prints "skipped" and
// exits 0 on a machine with no GPU.
#include <cstdio>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/simt/simt.hpp>
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::simt;

TESSERA_SIMT_KERNEL(twice, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>().block_exactly(128).require(size<"x"> == size<"out">);
};

constexpr const char* kTwiceSource = R"(
using namespace tessera::simt;
TESSERA_SIMT_DEFINE(twice, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  if (auto o = out.at(i)) *o = 2.0f * x[i];
}
)";

int main() {
  std::string why;
  if (!runtime::gpu_usable(&why)) {
    std::printf("simt_only_program: skipped: no usable GPU (%s)\n", why.c_str());
    return 0;
  }
  const Device gpu = Device::cuda(0);
  const int64_t n = 1000;
  std::vector<float> xs(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = 0.5f * static_cast<float>(i);
  const auto x = from_host<float, 1>(xs, {n}, gpu);
  const Module module = Module::nvrtc<twice>(kTwiceSource, "twice.cu", gpu);
  const std::vector<float> got =
      std::get<0>(prepare<twice>(module, cover(n, 128))(empty<float>({n}, gpu), x).sync())
          .to_vector();
  for (int64_t i = 0; i < n; ++i)
    if (got[i] != 2.0f * xs[i]) {
      std::printf("simt_only_program: element %lld is %g, want %g\n", static_cast<long long>(i),
                  got[i], 2.0f * xs[i]);
      return 1;
    }
  std::printf("simt_only_program: %lld elements: ok\n", static_cast<long long>(n));
  return 0;
}

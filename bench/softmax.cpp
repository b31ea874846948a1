// Row softmax of f16 matrices, one row per tile block, on the default device: a first read of how
// Tessera's reductions compare with Triton's fused softmax and torch (bench/torch_reference.py
// times those in the same run). Bytes: the input read once and the output written once.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(softmax_rows, Out<half> z, In<half> x) {
  auto v = load_like(x, z, Pad::neg_inf()).cast<float>();
  auto e = exp(v - max(v, 1));
  z.store((e / sum(e, 1)).cast<half>());
};

namespace {
using Clock = std::chrono::steady_clock;

bool bench(int64_t rows, int64_t cols, int iterations) {
  std::vector<half> host(static_cast<size_t>(rows * cols));
  std::mt19937 gen(7);
  std::normal_distribution<float> dist(0.f, 1.f);
  for (auto& e : host) e = half(dist(gen));
  auto x = from_host<half>(host, {rows, cols});
  auto a = zeros<half>({rows, cols}).partition({1, cols});
  auto b = zeros<half>({rows, cols}).partition({1, cols});
  for (int w = 0; w < 3; ++w) a = std::get<0>(softmax_rows(std::move(a), x).sync());
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; i += 2) {
      auto fa = softmax_rows(std::move(a), x).async();
      auto fb = softmax_rows(std::move(b), x).async();
      a = std::get<0>(std::move(fa).sync());
      b = std::get<0>(std::move(fb).sync());
    }
    rounds.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
                     iterations);
  }
  std::sort(rounds.begin(), rounds.end());
  const double ms = rounds[rounds.size() / 2];
  const double bytes = 2.0 * static_cast<double>(rows * cols) * sizeof(half);
  std::printf("%-40s %10.4f ms %10.1f GB/s\n",
              ("tessera softmax f16 " + std::to_string(rows) + "x" + std::to_string(cols)).c_str(),
              ms, bytes / ms / 1e6);
  // The result is a softmax: each row sums to 1.
  auto out = std::move(a).unpartition().to_vector();
  double worst = 0;
  for (int64_t r = 0; r < rows; r += rows / 16) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c) s += static_cast<float>(out[r * cols + c]);
    worst = std::max(worst, std::abs(s - 1.0));
  }
  if (worst > 2e-2) {
    std::printf("WRONG softmax %lldx%lld: a row sums to 1 +- %g\n", static_cast<long long>(rows),
                static_cast<long long>(cols), worst);
    return false;
  }
  return true;
}
}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 20;
  std::printf("# tessera softmax on %s\n", default_device().str().c_str());
  bool ok = bench(8192, 8192, iterations);
  ok &= bench(32768, 4096, iterations);
  return ok ? 0 : 1;  // a wrong result fails the run (bench/rowwise checks every op more fully)
}

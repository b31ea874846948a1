// Elementwise bandwidth: add and saxpy, f32 and f16, on the default device (the GPU when usable).
// Prints one row per workload: median milliseconds per launch and GB/s, counting each input read
// once and the output written once. Also times the first launch (trace + JIT, cold or from the
// disk cache, depending on TESSERA_CACHE_DIR's contents) and a launch of an already compiled
// specialization with a new size (must not recompile).
//
//   elementwise [log2(n)=28] [tile=8192] [iterations=50]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

template <class T>
TESSERA_KERNEL(add_kernel, Out<T> z, In<T> x, In<T> y) {
  z.store(load_like(x, z) + load_like(y, z));
};

template <class T>
TESSERA_KERNEL(saxpy_kernel, Out<T> z, Scalar<T> a, In<T> x, In<T> y) {
  z.store(a * load_like(x, z) + load_like(y, z));
};

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

template <class T>
Tensor<T, 1> random_tensor(int64_t n, uint32_t seed) {
  std::vector<T> v(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& e : v) e = T(dist(gen));
  return from_host<T>(v, {n});
}

// Launches `launch(out)` `iterations` times, alternating two outputs so that the next launch is
// queued while the previous one runs; returns the median over rounds of the time per launch.
template <class T, class Launch>
double time_launches(int64_t n, int64_t tile, int iterations, Launch&& launch) {
  auto a = zeros<T>({n}).partition({tile});
  auto b = zeros<T>({n}).partition({tile});
  for (int w = 0; w < 3; ++w) a = std::get<0>(launch(std::move(a)).sync());  // warm-up
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; i += 2) {
      auto fa = launch(std::move(a)).async();
      auto fb = launch(std::move(b)).async();
      a = std::get<0>(std::move(fa).sync());
      b = std::get<0>(std::move(fb).sync());
    }
    rounds.push_back(ms_since(start) / iterations);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

void row(const std::string& name, double ms, double bytes) {
  std::printf("%-40s %10.4f ms %10.1f GB/s\n", name.c_str(), ms, bytes / ms / 1e6);
  std::fflush(stdout);
}

template <class T>
void bench(const char* tag, int64_t n, int64_t tile, int iterations, int log2n) {
  auto x = random_tensor<T>(n, 1);
  auto y = random_tensor<T>(n, 2);
  const double bytes = 3.0 * static_cast<double>(n) * sizeof(T);
  const std::string size = " n=2^" + std::to_string(log2n);

  // First launch of this specialization: trace + compile (or disk-cache hit).
  const auto first = Clock::now();
  auto [z0, x0, y0] = add_kernel<T>(zeros<T>({n}).partition({tile}), x, y).sync();
  std::printf("%-40s %10.2f ms\n", (std::string("first launch add ") + tag).c_str(), ms_since(first));
  // A new run-time size reuses the compiled kernel.
  const auto resized = Clock::now();
  auto [z1, x1, y1] = add_kernel<T>(zeros<T>({n / 2 + 7}).partition({tile}), x, y).sync();
  std::printf("%-40s %10.2f ms\n", (std::string("new size, same kernel add ") + tag).c_str(),
              ms_since(resized));

  row(std::string("tessera add ") + tag + size,
      time_launches<T>(n, tile, iterations, [&](Partition<T, 1> z) { return add_kernel<T>(std::move(z), x, y); }),
      bytes);
  row(std::string("tessera saxpy ") + tag + size,
      time_launches<T>(n, tile, iterations,
                       [&](Partition<T, 1> z) { return saxpy_kernel<T>(std::move(z), T(2.0f), x, y); }),
      bytes);
}

}  // namespace

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 28;
  const int64_t tile = argc > 2 ? std::atoll(argv[2]) : 8192;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 50;
  const int64_t n = int64_t{1} << log2n;
  std::printf("# tessera elementwise on %s, tile %lld\n", default_device().str().c_str(),
              static_cast<long long>(tile));
  bench<float>("f32", n, tile, iterations, log2n);
  bench<half>("f16", n, tile, iterations, log2n);
  return 0;
}

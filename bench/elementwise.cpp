// Elementwise bandwidth: add and saxpy, f32 and f16, on the default device (the GPU when usable).
// Prints one row per workload: median milliseconds per launch and GB/s, counting each input read
// once and the output written once. Also times the first launch (trace + JIT, cold or from the
// disk cache, depending on TESSERA_CACHE_DIR's contents) and a launch of an already compiled
// specialization with a new size (must not recompile), and one on a few thousand elements (the
// memory-cache hit, launch and wait: no compile); the outputs are made before the clock
// starts. With several tiles (a comma list), the rows repeat for each: the first-launch timings
// are those of the first tile.
//
//   elementwise [log2(n)=28] [tiles=8192] [iterations=50]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <tessera/tessera.hpp>

#include "launch_ring.hpp"

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

// Uniform in [-1, 1), fresh each run (xorshift64 from the clock: 2^28 elements in well under a
// second, where std::mt19937 takes several).
template <class T>
Tensor<T, 1> random_tensor(int64_t n, uint64_t salt) {
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) * 2654435761u + salt;
  s |= 1;
  for (auto& e : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    e = T(static_cast<float>(static_cast<double>(s >> 11) * 0x1p-52 - 1.0));
  }
  return from_host<T>(v, {n});
}

// The GPU time per launch: launches back to back through a ring of four outputs (three queued
// behind the running one). The median over rounds of `iterations` launches, after warm-up.
template <class T, class Launch>
double time_launches(int64_t n, int64_t tile, int iterations, Launch launch) {
  std::vector<Partition<T, 1>> outs;
  for (int i = 0; i < 4; ++i) outs.push_back(zeros<T>({n}).partition({tile}));
  LaunchRing ring(std::move(launch), std::move(outs));
  for (int w = 0; w < 8; ++w) ring.relaunch_oldest();
  std::vector<double> rounds;
  for (int r = 0; r < 7; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) ring.relaunch_oldest();
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
void bench(const char* tag, int64_t n, const std::vector<int64_t>& tiles, int iterations, int log2n) {
  const int64_t tile = tiles.front();
  auto x = random_tensor<T>(n, 1);
  auto y = random_tensor<T>(n, 2);
  const double bytes = 3.0 * static_cast<double>(n) * sizeof(T);
  const std::string size = " n=2^" + std::to_string(log2n);

  // First launch of this specialization: trace + compile (or disk-cache hit).
  auto fresh = zeros<T>({n}).partition({tile});
  auto resized_out = zeros<T>({n / 2 + 7}).partition({tile});
  auto small_out = zeros<T>({4103}).partition({tile});
  const auto first = Clock::now();
  auto [z0, x0, y0] = add_kernel<T>(std::move(fresh), x, y).sync();
  std::printf("%-40s %10.2f ms\n", (std::string("first launch add ") + tag).c_str(), ms_since(first));
  // A new run-time size reuses the compiled kernel.
  const auto resized = Clock::now();
  auto [z1, x1, y1] = add_kernel<T>(std::move(resized_out), x, y).sync();
  std::printf("%-40s %10.2f ms\n", (std::string("new size, same kernel add ") + tag).c_str(),
              ms_since(resized));
  // The memory-cache hit alone: the same kernel on 4103 elements, so the kernel's own time is
  // negligible and the row is the host's lookup, launch and wait.
  const auto small = Clock::now();
  auto [z2, x2, y2] = add_kernel<T>(std::move(small_out), x, y).sync();
  std::printf("%-40s %10.3f ms\n", (std::string("memory-cache hit add ") + tag + ", 4103 elements").c_str(),
              ms_since(small));

  for (int64_t t : tiles) {
    const std::string suffix = size + " tile " + std::to_string(t);
    row(std::string("tessera add ") + tag + suffix,
        time_launches<T>(n, t, iterations, [&](Partition<T, 1> z) { return add_kernel<T>(std::move(z), x, y); }),
        bytes);
    row(std::string("tessera saxpy ") + tag + suffix,
        time_launches<T>(n, t, iterations,
                         [&](Partition<T, 1> z) { return saxpy_kernel<T>(std::move(z), T(2.0f), x, y); }),
        bytes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int log2n = argc > 1 ? std::atoi(argv[1]) : 28;
  std::vector<int64_t> tiles;
  std::string list = argc > 2 ? argv[2] : "8192";
  for (size_t at = 0; at <= list.size();) {
    const size_t comma = std::min(list.find(',', at), list.size());
    tiles.push_back(std::atoll(list.substr(at, comma - at).c_str()));
    if (tiles.back() <= 0) {
      std::fprintf(stderr, "elementwise: tiles are positive integers, comma-separated: %s\n", list.c_str());
      return 2;
    }
    at = comma + 1;
  }
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 50;
  const int64_t n = int64_t{1} << log2n;
  std::printf("# tessera elementwise on %s\n", default_device().str().c_str());
  bench<float>("f32", n, tiles, iterations, log2n);
  bench<half>("f16", n, tiles, iterations, log2n);
  return 0;
}

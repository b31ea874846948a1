// GEMM written in the DSL as a user writes it: a loop over K tiles feeding mma with a carried f32
// accumulator, the result cast to the inputs' f16/bf16 on the store; and the same GEMM with a
// fused epilogue (bias row + relu). Each row: the median time per launch (a ring of async
// launches, 7 rounds after warm-up, fresh random inputs in [-1, 1)) and TFLOP/s counting 2*M*N*K.
// Every result is checked on 512 random elements against a double-precision reference; a wrong
// one prints the element and makes the program exit 1.
//
//   gemm                       the default shapes (bench/torch_reference.py --gemm times torch's)
//   gemm M N K [M N K ...]     these shapes
//   gemm --tune [M N K ...]    also a row for the autotuned GEMM (tessera/tune.hpp: the first
//                              launch of each shape bucket times six tile shapes and keeps the
//                              fastest; TESSERA_LOG=tune prints each one's time)
//   gemm --dtype f16|bf16 ...  only that dtype's rows (to profile one kernel: ncu --launch-skip)
//   gemm --split-k [M N K ...] also split-K rows (2, 3 and 4 splits, tiles 128x256x64 and
//                              128x128x64): each block multiplies one K range of one C tile and
//                              adds it into an f32 Accum (atomic adds), then a cast kernel writes
//                              T; the row's time is the zeroed sums, the split-K and the cast
//
// With TESSERA_TARGET_ARCH=sm_80 (or sm_86, sm_89) the kernels are compiled for that Ampere
// architecture and run as PTX that the driver compiles for the GPU: the Ampere lowering (cp.async
// ring + ldmatrix + mma.sync), timed on a Hopper GPU beside cuBLAS. Ampere code also gets rows at
// 128x128x32 tiles (four warps of 64x64, four 16 KB stages), the shape Ampere GEMMs often take.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <tessera/tessera.hpp>
#include <tessera/tune.hpp>

#include "launch_ring.hpp"

using namespace tessera;
using namespace tessera::tile;

template <class T, int BM, int BN, int BK>
TESSERA_KERNEL(gemm, Out<T> c, In<T> a, In<T> b) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  c.store(acc.template cast<T>());
};

template <class T, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_bias_relu, Out<T> c, In<T> a, In<T> b, In<float> bias) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  const Tile<float> row = load(bias, {0, j}, {1, BN});
  c.store(maximum(acc + broadcast(row, {BM, BN}), 0.0f).template cast<T>());
};

// Split-K over a grid of rank 2 (the pipelined lowering's): block (t, j) of a (tiles_m * S,
// tiles_n) grid takes C tile (t % tiles_m, j) and the K tiles [s * kps, (s + 1) * kps) of it,
// s = t / tiles_m; its product is added into c, which other splits of the tile add into too.
template <class T, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_split_k, Accum<float> c, In<T> a, In<T> b, Scalar<int32_t> k_per_split) {
  const Index tiles_m = ((a.dim(0) + (BM - 1)) / BM).template cast<int32_t>();
  const Index i = tile_index(0) % tiles_m, s = tile_index(0) / tiles_m, j = tile_index(1);
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  const Index k0 = s * k_per_split;
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  for_range(k0, minimum(k0 + k_per_split, k_tiles), [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  c.add(acc, {i, j});
};

// The split-K epilogue: the f32 sums cast to T.
template <class T>
TESSERA_KERNEL(cast_from_f32, Out<T> c, In<float> sums) {
  c.store(load_like(sums, c).template cast<T>());
};

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
std::vector<T> random_values(int64_t n, uint64_t salt) {
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) * 2654435761u + salt;
  s |= 1;
  for (auto& e : v) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    e = T(static_cast<float>(static_cast<double>(s >> 11) * 0x1p-52 - 1.0));
  }
  return v;
}

struct Shape3 {
  int64_t m, n, k;
};

// Checks 512 random elements of c (M x N) against sum_k a[m][k] * b[k][n] (+ bias, relu) in
// double. The kernel accumulates in f32 and rounds once to T: the bound is T's half ulp of the
// result plus f32 rounding over K terms of the sum of |products|.
template <class T>
bool check(const char* what, const std::vector<T>& c, const std::vector<T>& a,
           const std::vector<T>& b, const std::vector<float>* bias, Shape3 s) {
  const double eps = std::is_same_v<T, half> ? 0x1p-11 : 0x1p-8;
  uint64_t r = 0x9E3779B97F4A7C15ull;
  for (int t = 0; t < 512; ++t) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    const int64_t i = static_cast<int64_t>(r % static_cast<uint64_t>(s.m));
    const int64_t j = static_cast<int64_t>((r >> 32) % static_cast<uint64_t>(s.n));
    double want = 0, magnitude = 0;
    for (int64_t k = 0; k < s.k; ++k) {
      const double p = static_cast<double>(static_cast<float>(a[i * s.k + k])) *
                       static_cast<double>(static_cast<float>(b[k * s.n + j]));
      want += p;
      magnitude += std::fabs(p);
    }
    if (bias) want = std::max(want + (*bias)[j], 0.0);
    const double got = static_cast<float>(c[i * s.n + j]);
    if (!(std::fabs(got - want) <= eps * std::fabs(want) + 1e-6 * magnitude + 1e-6)) {
      std::printf("WRONG %s %lldx%lldx%lld: c[%lld][%lld] = %.6g, reference %.6g\n", what,
                  static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k), static_cast<long long>(i), static_cast<long long>(j),
                  got, want);
      return false;
    }
  }
  return true;
}

// Median milliseconds per launch of `launch(out)` over a ring of 3 outputs, rounds drained (a
// round is a few long launches); then `verify` checks what the last timed launch wrote, so a row
// is never the time of a launch that computed something else.
template <class T, class Launch, class Verify>
double time_ring(Shape3 s, std::pair<int64_t, int64_t> tile, int iterations, Launch launch,
                 Verify verify, bool& ok) {
  std::vector<Partition<T, 2>> outs;
  for (int i = 0; i < 3; ++i)
    outs.push_back(zeros<T>({s.m, s.n}).partition({tile.first, tile.second}));
  LaunchRing ring(std::move(launch), std::move(outs));
  const double ms = median_ms_per_launch(ring, iterations, Rounds::Drained);
  Partition<T, 2> last = ring.take_finished();  // oldest first: the last one is the last launched
  while (ring.has_finished()) last = ring.take_finished();
  ok &= verify(std::move(last).unpartition().to_vector());
  return ms;
}

void row(const std::string& name, Shape3 s, double ms) {
  const double tflops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) *
                        static_cast<double>(s.k) / (ms * 1e9);
  std::printf("%-44s %10.4f ms %10.1f TFLOP/s\n", name.c_str(), ms, tflops);
  std::fflush(stdout);
}

// The GEMM's candidates for the Hopper pipeline (wgmma is 64 rows per consumer warpgroup, B in
// 64-column strips up to 256): large tiles for large shapes, narrower ones for ragged and skinny
// shapes, whose last wave of tiles would leave many SMs idle.
template <class T>
const auto& tuned_gemm() {
  static const auto tuner =
      tune::candidates(std::string("bench.gemm.") + (std::is_same_v<T, half> ? "f16" : "bf16"),
                       tune::config("128x256x64", gemm<T, 128, 256, 64>, {128, 256}),
                       tune::config("128x192x64", gemm<T, 128, 192, 64>, {128, 192}),
                       tune::config("128x128x64", gemm<T, 128, 128, 64>, {128, 128}),
                       tune::config("64x256x64", gemm<T, 64, 256, 64>, {64, 256}),
                       tune::config("128x64x64", gemm<T, 128, 64, 64>, {128, 64}),
                       tune::config("64x128x64", gemm<T, 64, 128, 64>, {64, 128}));
  return tuner;
}

// The tuned GEMM's row: the first call tunes (or reads the winner from the JIT cache folder);
// the row times the tuned call itself, winner lookup included.
template <class T>
bool bench_tuned(const char* tag, Shape3 s, const Tensor<T>& a, const Tensor<T>& b,
                 const std::vector<T>& ha, const std::vector<T>& hb, int iterations) {
  const auto t0 = Clock::now();
  auto [c, a1, b1] = tuned_gemm<T>()(zeros<T>({s.m, s.n}), a, b).sync();
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  const Shape tile = c.tile_shape();
  bool ok = check(("tuned gemm " + std::string(tag)).c_str(),
                  std::move(c).unpartition().to_vector(), ha, hb, nullptr, s);
  const std::string name = std::string("tessera gemm tuned ") + tag + " " + std::to_string(s.m) +
                           "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " (" +
                           std::to_string(tile[0]) + "x" + std::to_string(tile[1]) + ")";
  row(name, s,
      time_ring<T>(
          s, {tile[0], tile[1]}, iterations,
          [&](Partition<T, 2> out) { return tuned_gemm<T>()(std::move(out).unpartition(), a, b); },
          [&](const std::vector<T>& got) {
            return check(("timed tuned gemm " + std::string(tag)).c_str(), got, ha, hb, nullptr, s);
          },
          ok));
  std::printf("%-44s first call %.0f ms (tuning, or reading the stored winner)\n", "", first_ms);
  return ok;
}

// One split-K GEMM: fresh zeroed f32 sums (the stream-ordered pool's memory, zero-filled on the
// device), the split-K launch, and the cast to T, issued back to back (chain()). Returns the
// cast's future (the output partition first, as LaunchRing wants).
template <class T, int BM, int BN, int BK>
auto split_k_gemm(Partition<T, 2> out, const Tensor<T>& a, const Tensor<T>& b, int splits) {
  const int64_t m = a.dim(0), n = b.dim(1);
  const int64_t tiles_m = (m + BM - 1) / BM, tiles_n = (n + BN - 1) / BN;
  const int64_t k_tiles = (a.dim(1) + BK - 1) / BK;
  const auto kps = static_cast<int32_t>((k_tiles + splits - 1) / splits);
  auto [sums, a1, b1, k1] =
      gemm_split_k<T, BM, BN, BK>(zeros<float>({m, n}).accumulate({tiles_m * splits, tiles_n}), a,
                                  b, kps)
          .chain();
  return cast_from_f32<T>(std::move(out), std::move(sums).tensor());
}

template <class T, int BM, int BN, int BK>
bool bench_split_k(const char* tag, Shape3 s, const Tensor<T>& a, const Tensor<T>& b,
                   const std::vector<T>& ha, const std::vector<T>& hb, int iterations) {
  bool ok = true;
  for (int splits : {2, 3, 4}) {
    auto [c, sums] =
        split_k_gemm<T, BM, BN, BK>(zeros<T>({s.m, s.n}).partition({128, 128}), a, b, splits)
            .sync();
    const std::string what = "split-K " + std::to_string(splits) + " " + std::to_string(BM) + "x" +
                             std::to_string(BN) + "x" + std::to_string(BK) + " " + tag;
    ok &= check(what.c_str(), std::move(c).unpartition().to_vector(), ha, hb, nullptr, s);
    row("tessera gemm " + what + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
            std::to_string(s.k),
        s,
        time_ring<T>(
            s, {128, 128}, iterations,
            [&](Partition<T, 2> out) {
              return split_k_gemm<T, BM, BN, BK>(std::move(out), a, b, splits);
            },
            [&](const std::vector<T>& got) {
              return check(("timed " + what).c_str(), got, ha, hb, nullptr, s);
            },
            ok));
  }
  return ok;
}

template <class T, int BM, int BN, int BK>
bool bench(const char* tag, Shape3 s, bool tuned, bool split_k = false) {
  const std::vector<T> ha = random_values<T>(s.m * s.k, 1), hb = random_values<T>(s.k * s.n, 2);
  std::vector<float> hbias = random_values<float>(s.n, 3);
  const auto a = from_host<T>(ha, {s.m, s.k});
  const auto b = from_host<T>(hb, {s.k, s.n});
  const auto bias = from_host<float>(hbias, {1, s.n});
  const std::string shape =
      " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  const double flop =
      2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  const int iterations = std::clamp(static_cast<int>(2e12 / flop), 3, 200);  // ~a few ms a round
  const std::pair<int64_t, int64_t> tile{BM, BN};
  bool ok = true;

  auto [c, a1, b1] = gemm<T, BM, BN, BK>(zeros<T>({s.m, s.n}).partition({BM, BN}), a, b).sync();
  ok &= check(("gemm " + std::string(tag)).c_str(), std::move(c).unpartition().to_vector(), ha, hb,
              nullptr, s);
  row(std::string("tessera gemm ") + tag + shape, s,
      time_ring<T>(
          s, tile, iterations,
          [&](Partition<T, 2> out) { return gemm<T, BM, BN, BK>(std::move(out), a, b); },
          [&](const std::vector<T>& got) {
            return check(("timed gemm " + std::string(tag)).c_str(), got, ha, hb, nullptr, s);
          },
          ok));

  auto [e, a2, b2, bias2] =
      gemm_bias_relu<T, BM, BN, BK>(zeros<T>({s.m, s.n}).partition({BM, BN}), a, b, bias).sync();
  ok &= check(("gemm+bias+relu " + std::string(tag)).c_str(),
              std::move(e).unpartition().to_vector(), ha, hb, &hbias, s);
  row(std::string("tessera gemm+bias+relu ") + tag + shape, s,
      time_ring<T>(
          s, tile, iterations,
          [&](Partition<T, 2> out) {
            return gemm_bias_relu<T, BM, BN, BK>(std::move(out), a, b, bias);
          },
          [&](const std::vector<T>& got) {
            return check(("timed gemm+bias+relu " + std::string(tag)).c_str(), got, ha, hb, &hbias,
                         s);
          },
          ok));
  if (tuned) ok &= bench_tuned<T>(tag, s, a, b, ha, hb, iterations);
  if (split_k) {
    ok &= bench_split_k<T, 128, 256, 64>(tag, s, a, b, ha, hb, iterations);
    ok &= bench_split_k<T, 128, 128, 64>(tag, s, a, b, ha, hb, iterations);
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape3> shapes;
  bool tuned = false, split_k = false;
  std::string only;  // "f16" or "bf16": that dtype's rows alone
  std::vector<const char*> numbers;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--tune")
      tuned = true;
    else if (std::string(argv[i]) == "--dtype" && i + 1 < argc)
      only = argv[++i];
    else if (std::string(argv[i]) == "--split-k")
      split_k = true;
    else
      numbers.push_back(argv[i]);
  for (size_t i = 0; i + 2 < numbers.size(); i += 3)
    shapes.push_back(
        {std::atoll(numbers[i]), std::atoll(numbers[i + 1]), std::atoll(numbers[i + 2])});
  if (shapes.empty())
    shapes = {{4096, 4096, 4096},  {8192, 8192, 8192}, {8192, 8192, 1024},
              {4096, 14336, 4096}, {16, 14336, 4096},  {4000, 3000, 2000}};
  const char* target = std::getenv("TESSERA_TARGET_ARCH");
  const bool ampere = target && std::string(target).rfind("sm_8", 0) == 0;
  std::printf("# tessera gemm on %s%s%s (tiles 128x256x64; M=16: 64x128x64)\n",
              default_device().str().c_str(), ampere ? ", code for " : "", ampere ? target : "");
  bool ok = true;
  for (const Shape3& s : shapes) {
    const bool f16 = only != "bf16", bf16 = only != "f16";
    if (s.m <= 64) {
      if (f16) ok &= bench<half, 64, 128, 64>("f16", s, tuned);
      if (bf16) ok &= bench<bfloat16, 64, 128, 64>("bf16", s, tuned);
    } else {
      if (f16) ok &= bench<half, 128, 256, 64>("f16", s, tuned, split_k);
      if (bf16) ok &= bench<bfloat16, 128, 256, 64>("bf16", s, tuned, split_k);
      if (ampere) {
        if (f16) ok &= bench<half, 128, 128, 32>("f16 (tile 128x128x32)", s, false);
        if (bf16) ok &= bench<bfloat16, 128, 128, 32>("bf16 (tile 128x128x32)", s, false);
      }
    }
  }
  return ok ? 0 : 1;
}

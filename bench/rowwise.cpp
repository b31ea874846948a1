// Row-wise kernels written in the DSL as a user writes them, one row per tile block: softmax,
// RMSNorm and LayerNorm, in f16 and bf16 (computed in f32), each under both numerics policies
// (exact: what the CPU backend computes; fast: the GPU's approximate exp, division and rsqrt, see
// docs/dsl.md "Numerics"). bench/torch_reference.py --rowwise times torch and Triton on the same
// shapes in the same run.
//
// Each row: the median time per launch (a ring of async launches, 7 rounds after warm-up, fresh
// random inputs, three copies of the input taken in turn so that a launch never finds the one
// before it's input in L2: with one input, the 8192x8192 ring ran 5-9% above the kernel timed
// with L2 flushed on an H100, L2 reuse the suspected cause) and GB/s counting what must move: the
// input read once and the output written once (the norms' weight rows are noise beside that). Every
// result is checked on 16 random rows against a double-precision reference; a wrong element is
// printed and the program exits 1.
//
//   rowwise                    the default shapes: 8192x8192, 32768x4096, 1024x65536
//   rowwise ROWS COLS [...]    these shapes
//   --op softmax|rmsnorm|layernorm, --dtype f16|bf16, --numerics exact|fast: only those rows
//   (for a profiler, which then sees one kernel)
//   --host-split               also print, per row, the host's time a ring step spends waiting
//                              for the oldest launch and in the launch call
//   --check-only               one launch of each kernel, checked, nothing timed: how to get the
//                              kernels' CUDA on a machine without a GPU in seconds
//                              (TESSERA_DEVICE=cpu TESSERA_NVRTC_CHECK=sm_90a TESSERA_DUMP=cuda;
//                              the timed rounds there would run in the interpreter for minutes)
//   --flush-l2                 each launch after a 256 MiB write that evicts the L2, its time
//                              subtracted (tessera::time_launches' flush_l2): how Triton's
//                              do_bench times the Triton rows of bench/torch_reference.py, for
//                              that comparison by one method (the ring alone is how
//                              torch_reference.py --back-to-back times them)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include <tessera/tessera.hpp>
#include <tessera/timing.hpp>

#include "launch_ring.hpp"

using namespace tessera;
using namespace tessera::tile;

constexpr float kEps = 1e-5f;

template <class T, Numerics N>
TESSERA_KERNEL(softmax_rows, Out<T> z, In<T> x) {
  numerics(N);
  const Tile<float> v = load_like(x, z, Pad::neg_inf()).template cast<float>();
  const Tile<float> e = exp(v - max(v, 1));
  z.store((e / sum(e, 1)).template cast<T>());
};

template <class T, Numerics N>
TESSERA_KERNEL(rmsnorm_rows, Out<T> y, In<T> x, In<float> w) {
  numerics(N);
  const int64_t cols = y.shape()[1];
  const Tile<float> v = load_like(x, y).template cast<float>();
  const Tile<float> r = rsqrt(sum(v * v, 1) * (1.0f / static_cast<float>(cols)) + kEps);
  y.store((v * r * load(w, {0, 0}, {1, cols})).template cast<T>());
};

template <class T, Numerics N>
TESSERA_KERNEL(layernorm_rows, Out<T> y, In<T> x, In<float> w, In<float> b) {
  numerics(N);
  const int64_t cols = y.shape()[1];
  const float inv = 1.0f / static_cast<float>(cols);
  const Tile<float> v = load_like(x, y).template cast<float>();
  const Tile<float> d = v - sum(v, 1) * inv;
  const Tile<float> r = rsqrt(sum(d * d, 1) * inv + kEps);
  y.store((d * r * load(w, {0, 0}, {1, cols}) + load(b, {0, 0}, {1, cols})).template cast<T>());
};

namespace {

using Clock = std::chrono::steady_clock;

enum class Op { softmax, rmsnorm, layernorm };
const char* name(Op op) {
  return op == Op::softmax ? "softmax" : op == Op::rmsnorm ? "rmsnorm" : "layernorm";
}

// Normal(0, 1) values from a seed that changes every run.
template <class T>
std::vector<T> random_normal(int64_t n, uint64_t salt) {
  std::vector<T> v(static_cast<size_t>(n));
  uint64_t s = static_cast<uint64_t>(Clock::now().time_since_epoch().count()) * 2654435761u + salt;
  s |= 1;
  auto uniform = [&s] {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    return (static_cast<double>(s >> 11) + 0.5) * 0x1p-53;
  };
  for (auto& e : v)  // Box-Muller
    e = T(static_cast<float>(std::sqrt(-2 * std::log(uniform())) *
                             std::cos(6.283185307 * uniform())));
  return v;
}

// One row of the op in double, from the T inputs (widened exactly).
template <class T>
std::vector<double> reference_row(Op op, const T* x, int64_t cols, const std::vector<float>& w,
                                  const std::vector<float>& b) {
  std::vector<double> v(static_cast<size_t>(cols)), out(v.size());
  for (int64_t c = 0; c < cols; ++c) v[c] = static_cast<float>(x[c]);
  if (op == Op::softmax) {
    const double m = *std::max_element(v.begin(), v.end());
    double s = 0;
    for (double e : v) s += std::exp(e - m);
    for (int64_t c = 0; c < cols; ++c) out[c] = std::exp(v[c] - m) / s;
  } else if (op == Op::rmsnorm) {
    double ss = 0;
    for (double e : v) ss += e * e;
    const double r = 1 / std::sqrt(ss / static_cast<double>(cols) + kEps);
    for (int64_t c = 0; c < cols; ++c) out[c] = v[c] * r * w[c];
  } else {
    double mean = 0, var = 0;
    for (double e : v) mean += e;
    mean /= static_cast<double>(cols);
    for (double e : v) var += (e - mean) * (e - mean);
    const double r = 1 / std::sqrt(var / static_cast<double>(cols) + kEps);
    for (int64_t c = 0; c < cols; ++c) out[c] = (v[c] - mean) * r * w[c] + b[c];
  }
  return out;
}

// Checks 16 random rows. The bound: T's rounding of the result (half an ulp, one more for the f32
// steps and, under fast numerics, the approximate instructions' few f32 ulps); absolutely, T's
// subnormal spacing for the tiny probabilities of a long softmax row, and for the norms the f32
// rounding of terms of size ~1 that cancel to a result near zero.
template <class T>
bool check(Op op, const char* what, const std::vector<T>& got, const std::vector<T>& x,
           int64_t rows, int64_t cols, const std::vector<float>& w, const std::vector<float>& b) {
  const double rel = std::is_same_v<T, half> ? 0x1p-10 : 0x1p-7;
  const double abs = op != Op::softmax ? 1e-6 : std::is_same_v<T, half> ? 0x1p-24 : 0x1p-126;
  uint64_t r = 0x9E3779B97F4A7C15ull;
  for (int t = 0; t < 16; ++t) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    const int64_t i = static_cast<int64_t>(r % static_cast<uint64_t>(rows));
    const std::vector<double> want = reference_row(op, &x[i * cols], cols, w, b);
    for (int64_t c = 0; c < cols; ++c) {
      const double g = static_cast<float>(got[i * cols + c]);
      if (!(std::fabs(g - want[c]) <= rel * std::fabs(want[c]) + abs)) {
        std::printf("WRONG %s %lldx%lld: [%lld][%lld] = %.6g, reference %.6g\n", what,
                    static_cast<long long>(rows), static_cast<long long>(cols),
                    static_cast<long long>(i), static_cast<long long>(c), g, want[c]);
        return false;
      }
    }
  }
  return true;
}

bool flush_l2 = false;    // --flush-l2
bool host_split = false;  // --host-split
bool check_only = false;  // --check-only

// A row's time per launch, and where a ring step's host time went (--host-split; else zeros).
struct RingTime {
  double ms = 0;
  double wait_us = 0, launch_us = 0;
};

template <class T, class Launch>
RingTime time_ring(int64_t rows, int64_t cols, int iterations, Launch launch) {
  std::vector<Partition<T, 2>> outs;
  for (int i = 0; i < 3; ++i) outs.push_back(zeros<T>({rows, cols}).partition({1, cols}));
  if (flush_l2) return {.ms = time_launches(launch, outs, {.flush_l2 = true}).median_ms};
  LaunchRing ring(std::move(launch), std::move(outs));
  ring.time_host(host_split);
  const double ms = median_ms_per_launch(ring, iterations);
  return {.ms = ms, .wait_us = ring.wait_us(), .launch_us = ring.launch_us()};
}

// One shape's inputs, on the host (for the reference) and on the device, shared by every op: the
// row-sized input three times over (the ring takes them in turn), the weight and bias rows once.
template <class T>
struct Inputs {
  std::vector<T> hx;
  std::vector<float> hw, hb;
  std::vector<Tensor<T, 2>> xs;
  Tensor<float, 2> w, b;
  Inputs(int64_t rows, int64_t cols)
      : hx(random_normal<T>(rows * cols, 1)),
        hw(random_normal<float>(cols, 7)),
        hb(random_normal<float>(cols, 8)),
        w(from_host<float>(hw, {1, cols})),
        b(from_host<float>(hb, {1, cols})) {
    for (int i = 0; i < 3; ++i) xs.push_back(from_host<T>(hx, {rows, cols}));
  }
};

// Runs, checks and times one op in one dtype under one numerics policy.
template <class T, Numerics N>
bool bench(Op op, const char* tag, int64_t rows, int64_t cols, const Inputs<T>& in) {
  const std::vector<T>& hx = in.hx;
  const std::vector<float>&hw = in.hw, &hb = in.hb;
  const Tensor<T, 2>& x = in.xs.front();
  const Tensor<float, 2>&w = in.w, &b = in.b;
  auto launch = [&](Partition<T, 2> out) {
    if (op == Op::softmax) return std::get<0>(softmax_rows<T, N>(std::move(out), x).sync());
    if (op == Op::rmsnorm) return std::get<0>(rmsnorm_rows<T, N>(std::move(out), x, w).sync());
    return std::get<0>(layernorm_rows<T, N>(std::move(out), x, w, b).sync());
  };
  const std::string what =
      std::string(name(op)) + " " + tag + (N == Numerics::fast ? " fast" : " exact");
  const bool ok =
      check(op, what.c_str(),
            launch(zeros<T>({rows, cols}).partition({1, cols})).unpartition().to_vector(), hx, rows,
            cols, hw, hb);
  if (check_only) {
    std::printf("tessera %s %lldx%lld: %s\n", what.c_str(), static_cast<long long>(rows),
                static_cast<long long>(cols), ok ? "checked" : "WRONG");
    return ok;
  }
  const double bytes = 2.0 * static_cast<double>(rows * cols) * sizeof(T);
  const int iterations = std::clamp(static_cast<int>(2e9 / bytes), 5, 200);  // ~ms a round
  // The three ops' launches own different arguments (so return different futures): one ring each,
  // each launch taking the next copy of the input.
  size_t launches = 0;
  auto next_x = [&]() -> const Tensor<T, 2>& { return in.xs[launches++ % in.xs.size()]; };
  RingTime t;
  if (op == Op::softmax)
    t = time_ring<T>(rows, cols, iterations, [&](Partition<T, 2> out) {
      return softmax_rows<T, N>(std::move(out), next_x());
    });
  else if (op == Op::rmsnorm)
    t = time_ring<T>(rows, cols, iterations, [&](Partition<T, 2> out) {
      return rmsnorm_rows<T, N>(std::move(out), next_x(), w);
    });
  else
    t = time_ring<T>(rows, cols, iterations, [&](Partition<T, 2> out) {
      return layernorm_rows<T, N>(std::move(out), next_x(), w, b);
    });
  const double ms = t.ms;
  std::printf("%-48s %10.4f ms %10.1f GB/s\n",
              ("tessera " + what + " " + std::to_string(rows) + "x" + std::to_string(cols)).c_str(),
              ms, bytes / ms / 1e6);
  if (host_split && !flush_l2)
    std::printf("  host per ring step: %.1f us waiting for the oldest launch, %.1f us launching\n",
                t.wait_us, t.launch_us);
  std::fflush(stdout);
  return ok;
}

// What the command line selects; an empty string selects every value.
struct Filter {
  std::string op, dtype, numerics;
  bool wants(const std::string& want, const char* value) const {
    return want.empty() || want == value;
  }
};

template <class T>
bool bench_all(const Filter& only, const char* tag, int64_t rows, int64_t cols) {
  if (!only.wants(only.dtype, tag)) return true;
  bool ok = true;
  const Inputs<T> in(rows, cols);
  for (Op op : {Op::softmax, Op::rmsnorm, Op::layernorm}) {
    if (!only.wants(only.op, name(op))) continue;
    if (only.wants(only.numerics, "exact"))
      ok &= bench<T, Numerics::exact>(op, tag, rows, cols, in);
    if (only.wants(only.numerics, "fast")) ok &= bench<T, Numerics::fast>(op, tag, rows, cols, in);
  }
  return ok;
}

// A positive dimension, or 0 for anything else.
int64_t dimension(const char* text) {
  char* end = nullptr;
  const long long v = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && v > 0 ? v : 0;
}

int usage(const std::string& why) {
  std::fprintf(
      stderr,
      "rowwise: %s\nusage: rowwise [--op softmax|rmsnorm|layernorm] [--dtype f16|bf16] "
      "[--numerics exact|fast] [--check-only] [--flush-l2] [--host-split] [ROWS COLS ...]\n",
      why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::pair<int64_t, int64_t>> shapes;
  std::vector<int64_t> dims;
  Filter only;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--check-only") {
      check_only = true;
    } else if (arg == "--flush-l2") {
      flush_l2 = true;
    } else if (arg == "--host-split") {
      host_split = true;
    } else if (arg == "--op" || arg == "--dtype" || arg == "--numerics") {
      if (i + 1 == argc) return usage(arg + " needs a value");
      std::string& value = arg == "--op" ? only.op : arg == "--dtype" ? only.dtype : only.numerics;
      value = argv[++i];
    } else if (const int64_t d = dimension(argv[i]); d > 0) {
      dims.push_back(d);
    } else {
      return usage("unknown argument '" + arg + "' (shapes are positive ROWS COLS pairs)");
    }
  }
  if (dims.size() % 2 != 0) return usage("a shape needs both ROWS and COLS");
  for (size_t i = 0; i < dims.size(); i += 2) shapes.emplace_back(dims[i], dims[i + 1]);
  if (shapes.empty()) shapes = {{8192, 8192}, {32768, 4096}, {1024, 65536}};
  std::printf("# tessera rowwise on %s (one row per tile block%s)\n",
              default_device().str().c_str(),
              flush_l2 ? "; L2 flushed before each launch, the flush's time subtracted" : "");
  bool ok = true;
  for (auto [rows, cols] : shapes) {
    ok &= bench_all<half>(only, "f16", rows, cols);
    ok &= bench_all<bfloat16>(only, "bf16", rows, cols);
  }
  return ok ? 0 : 1;
}

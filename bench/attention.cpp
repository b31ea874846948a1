// Prefill attention (the kernel library's flash_attention, written in the safe DSL) at the shape
// of issue 14: B4 H32 L4096 D128, f16 and bf16, causal and not. bench/torch_reference.py
// --attention times PyTorch SDPA forced to its cuDNN and flash backends on the same shapes, with
// the same row format, in the same run.
//
// Each row: the median time per call over 7 rounds after warm-up (each call is the host
// function: allocate the output, launch, wait; at ~1 ms a call the host's share is ~1-2%), and
// TFLOP/s counting 4*B*H*L*L*D (two matrix products), halved for causal. Inputs are fresh random
// values in [-1, 1) (each tensor is 128 MB, larger than L2). Every result is checked on 24 random
// (batch, head, query) rows against a double-precision softmax(q k^T / sqrt(D)) v; a wrong element
// is printed and the program exits 1.
//
//   attention                      B4 H32 L4096 D128
//   attention B H L D [B H L D...] these shapes
//   --dtype f16|bf16, --causal 0|1: only those rows (for a profiler)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <tessera/kernels/attention.hpp>
#include <tessera/tessera.hpp>

using namespace tessera;

namespace {

using Clock = std::chrono::steady_clock;

struct Shape4 {
  int64_t b, h, l, d;
  int64_t elements() const { return b * h * l * d; }
};

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

// o[b, i, h, :] against softmax(q k^T * scale) v in double, on 24 random rows. The kernel rounds
// the probabilities to T before they weigh v (|v| <= 1) and the output once: a few units of T's
// roundoff, plus f32 scores and sums.
template <class T>
bool check(const std::string& what, const std::vector<T>& o, const std::vector<T>& q,
           const std::vector<T>& k, const std::vector<T>& v, Shape4 s, bool causal) {
  const double u = std::is_same_v<T, half> ? 0x1p-11 : 0x1p-8;
  const double scale = 1 / std::sqrt(static_cast<double>(s.d));
  const auto at = [&](const std::vector<T>& x, int64_t b, int64_t i, int64_t h, int64_t d) {
    return static_cast<double>(static_cast<float>(x[((b * s.l + i) * s.h + h) * s.d + d]));
  };
  uint64_t r = 0x9E3779B97F4A7C15ull;
  for (int t = 0; t < 24; ++t) {
    r ^= r << 13, r ^= r >> 7, r ^= r << 17;
    const int64_t b = static_cast<int64_t>(r % static_cast<uint64_t>(s.b));
    const int64_t h = static_cast<int64_t>((r >> 16) % static_cast<uint64_t>(s.h));
    // The last rows too: the causal mask's diagonal tile and a ragged edge, if any.
    const int64_t i = t < 2 ? s.l - 1 - t : static_cast<int64_t>((r >> 32) % s.l);
    const int64_t visible = causal ? i + 1 : s.l;
    std::vector<double> p(static_cast<size_t>(visible));
    double m = -INFINITY, sum = 0;
    for (int64_t j = 0; j < visible; ++j) {
      double dot = 0;
      for (int64_t d = 0; d < s.d; ++d) dot += at(q, b, i, h, d) * at(k, b, j, h, d);
      p[static_cast<size_t>(j)] = dot * scale;
      m = std::max(m, dot * scale);
    }
    for (double& e : p) sum += (e = std::exp(e - m));
    for (int64_t d = 0; d < s.d; ++d) {
      double want = 0;
      for (int64_t j = 0; j < visible; ++j) want += p[static_cast<size_t>(j)] * at(v, b, j, h, d);
      want /= sum;
      const double got = at(o, b, i, h, d);
      if (!(std::fabs(got - want) <= 4 * u * std::fabs(want) + 2 * u / std::sqrt(visible) + 1e-4)) {
        std::printf("WRONG %s: o[%lld, %lld, %lld, %lld] = %.6g, reference %.6g\n", what.c_str(),
                    static_cast<long long>(b), static_cast<long long>(i), static_cast<long long>(h),
                    static_cast<long long>(d), got, want);
        return false;
      }
    }
  }
  return true;
}

template <class F>
double median_ms(int iterations, F call) {
  for (int w = 0; w < 3; ++w) call();
  std::vector<double> rounds;
  for (int r = 0; r < 7; ++r) {
    const auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) call();
    rounds.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() /
                     iterations);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

template <class T>
bool bench(const char* tag, Shape4 s, int only_causal) {
  const std::vector<T> hq = random_values<T>(s.elements(), 1),
                       hk = random_values<T>(s.elements(), 2),
                       hv = random_values<T>(s.elements(), 3);
  const auto q = from_host<T>(hq, {s.b, s.l, s.h, s.d});
  const auto k = from_host<T>(hk, {s.b, s.l, s.h, s.d});
  const auto v = from_host<T>(hv, {s.b, s.l, s.h, s.d});
  bool ok = true;
  for (const bool causal : {false, true}) {
    if (only_causal >= 0 && causal != (only_causal == 1)) continue;
    kernels::AttentionOptions options;
    options.causal = causal;
    const std::string name = std::string("tessera attention ") + tag + (causal ? " causal" : "") +
                             " B" + std::to_string(s.b) + " H" + std::to_string(s.h) + " L" +
                             std::to_string(s.l) + " D" + std::to_string(s.d);
    ok &=
        check(name, kernels::flash_attention(q, k, v, options).to_vector(), hq, hk, hv, s, causal);
    const double flop = 4.0 * static_cast<double>(s.b * s.h) * static_cast<double>(s.l) *
                        static_cast<double>(s.l) * static_cast<double>(s.d) / (causal ? 2 : 1);
    const int iterations = std::clamp(static_cast<int>(2e12 / flop), 3, 100);
    const double ms =
        median_ms(iterations, [&] { (void)kernels::flash_attention(q, k, v, options); });
    std::printf("%-44s %10.4f ms %10.1f TFLOP/s\n", name.c_str(), ms, flop / (ms * 1e9));
    std::fflush(stdout);
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<Shape4> shapes;
  std::string dtype = "all";
  int causal = -1;
  std::vector<int64_t> numbers;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dtype") == 0 && i + 1 < argc) {
      dtype = argv[++i];
    } else if (std::strcmp(argv[i], "--causal") == 0 && i + 1 < argc) {
      causal = std::atoi(argv[++i]);
    } else {
      numbers.push_back(std::atoll(argv[i]));
    }
  }
  for (size_t i = 0; i + 3 < numbers.size(); i += 4)
    shapes.push_back({numbers[i], numbers[i + 1], numbers[i + 2], numbers[i + 3]});
  if (shapes.empty()) shapes = {{4, 32, 4096, 128}};
  std::printf("# tessera flash_attention on %s\n", default_device().str().c_str());
  bool ok = true;
  for (const Shape4& s : shapes) {
    if (dtype == "all" || dtype == "f16") ok &= bench<half>("f16", s, causal);
    if (dtype == "all" || dtype == "bf16") ok &= bench<bfloat16>("bf16", s, causal);
  }
  return ok ? 0 : 1;
}

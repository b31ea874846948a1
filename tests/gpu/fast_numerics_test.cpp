// Numerics::fast on the GPU: each approximate f32 operation stays within the bound docs/dsl.md
// ("Numerics") states, measured element by element against the CPU backend's exact result on
// fresh random inputs; NaN still propagates through max and min; a fast softmax agrees with the
// exact one. Needs a GPU: label gpu.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

namespace {

enum Fn { kExp, kLog, kDiv, kRsqrt, kSin, kCos, kMax, kMin };

template <int F>
TESSERA_KERNEL(fast_op, Out<float> z, In<float> x, In<float> y) {
  numerics(Numerics::fast);
  const Tile<float> a = load_like(x, z), b = load_like(y, z);
  if constexpr (F == kExp) z.store(exp(a));
  if constexpr (F == kLog) z.store(log(a));
  if constexpr (F == kDiv) z.store(a / b);
  if constexpr (F == kRsqrt) z.store(rsqrt(a));
  if constexpr (F == kSin) z.store(sin(a));
  if constexpr (F == kCos) z.store(cos(a));
  if constexpr (F == kMax) z.store(maximum(a, b));
  if constexpr (F == kMin) z.store(minimum(a, b));
};

// Exact numerics (the default): max in z's first row, min in its second.
TESSERA_KERNEL(exact_max_min, Out<float> z, In<float> x, In<float> y) {
  const Index j = z.tile_index(1);
  const Tile<float> a = load(x, {0, j}, {1, 1024}), b = load(y, {0, j}, {1, 1024});
  z.store(concat({maximum(a, b), minimum(a, b)}, 0));
};

template <Numerics N>
TESSERA_KERNEL(softmax_policy, Out<float> z, In<float> x) {
  numerics(N);
  const Tile<float> v = load_like(x, z, Pad::neg_inf());
  const Tile<float> e = exp(v - max(v, 1));
  z.store(e / sum(e, 1));
};

std::vector<float> uniform(int64_t n, double lo, double hi) {
  static std::mt19937 gen{std::random_device{}()};
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = static_cast<float>(dist(gen));
  return v;
}

double ulp(double v) {  // f32's unit in the last place at v
  const float f = std::fabs(static_cast<float>(v));
  return std::nextafter(f, INFINITY) - f;
}

// Runs fast_op<F> on the GPU and the CPU backend (exact) and checks |gpu - cpu| <= bound(x, cpu)
// for every element.
template <int F>
void check(const std::string& what, const std::vector<float>& xs, const std::vector<float>& ys,
           const std::function<double(double x, double exact)>& bound) {
  const int64_t n = static_cast<int64_t>(xs.size());
  auto run = [&](Device d) {
    auto [z, x, y] = fast_op<F>(zeros<float>({n}, d).partition({1024}), from_host(xs, {n}, d),
                                from_host(ys, {n}, d))
                         .sync();
    return std::move(z).unpartition().to_vector();
  };
  const std::vector<float> cpu = run(Device::cpu()), gpu = run(Device::cuda(0));
  int bad = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double c = cpu[i], g = gpu[i];
    const bool ok = std::isnan(c) ? std::isnan(g) : std::fabs(g - c) <= bound(xs[i], c);
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << "(" << xs[i] << ", " << ys[i] << "): exact " << c << ", fast " << g
                    << ", bound " << bound(xs[i], c);
  }
  EXPECT_EQ(bad, 0) << what;
}

constexpr int64_t kN = 1 << 16;

TEST(FastNumerics, ExpWithinTwoPlusOnePointTwoTimesXUlps) {
  check<kExp>("exp", uniform(kN, -80, 80), uniform(kN, 1, 2),
              [](double x, double c) { return (3 + std::floor(1.173 * std::fabs(x))) * ulp(c); });
}
TEST(FastNumerics, ExpOfSubnormalResultsIsZeroOrTheExactValue) {
  // exp(x) for x in [-103, -87.4] is subnormal in f32: fast numerics may flush it to zero, so the
  // bound is absolute, the smallest normal f32.
  check<kExp>("exp", uniform(kN, -103, -87.4), uniform(kN, 1, 2),
              [](double, double) { return std::ldexp(1.0, -126); });
}
TEST(FastNumerics, LogWithinDocumentedBound) {
  // [0.5, 2]: absolute 2^-21.41; elsewhere 3 ulps (one more for the exact side's rounding).
  check<kLog>("log", uniform(kN, 1e-3, 1e3), uniform(kN, 1, 2), [](double x, double c) {
    return x >= 0.5 && x <= 2 ? std::ldexp(1.0, -21) : 4 * ulp(c);
  });
}
TEST(FastNumerics, DivisionWithinTwoUlps) {
  check<kDiv>("div", uniform(kN, -1e3, 1e3), uniform(kN, 1e-3, 1e3),
              [](double, double c) { return 3 * ulp(c); });
}
TEST(FastNumerics, RsqrtWithinTwoUlps) {
  check<kRsqrt>("rsqrt", uniform(kN, 1e-6, 1e6), uniform(kN, 1, 2),
                [](double, double c) { return 3 * ulp(c); });
}
TEST(FastNumerics, SinAndCosWithinTwoToTheMinus21OnMinusPiToPi) {
  const auto xs = uniform(kN, -3.14159, 3.14159), ys = uniform(kN, 1, 2);
  const auto bound = [](double, double) { return std::ldexp(1.0, -21); };
  check<kSin>("sin", xs, ys, bound);
  check<kCos>("cos", xs, ys, bound);
}
TEST(FastNumerics, MaxAndMinAreExactAndPropagateNaN) {
  std::vector<float> xs = uniform(kN, -10, 10), ys = uniform(kN, -10, 10);
  for (int64_t i = 0; i < kN; i += 97) (i % 2 ? xs : ys)[static_cast<size_t>(i)] = NAN;
  const auto exact = [](double, double) { return 0.0; };
  check<kMax>("max", xs, ys, exact);  // NaN in the CPU result must be NaN on the GPU (check())
  check<kMin>("min", xs, ys, exact);
}

TEST(ExactNumerics, MaxAndMinMatchTheCpuBitForBitOnSignedZerosAndPropagateNaN) {
  // Exact max / min return the first operand when the two compare equal: max(-0, +0) is -0 and
  // max(+0, -0) is +0 on both backends (one compare and one select on the GPU), and NaN when
  // either operand is NaN.
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const float pairs[][2] = {{-0.0f, 0.0f}, {0.0f, -0.0f},     {-0.0f, -0.0f}, {0.0f, 0.0f},
                            {1.5f, 1.5f},  {-2.0f, 3.0f},     {NAN, 1.0f},    {1.0f, NAN},
                            {NAN, NAN},    {-INFINITY, -0.0f}};
  const int64_t n = 2048;
  std::vector<float> xs = uniform(n, -4, 4), ys = uniform(n, -4, 4);
  for (size_t i = 0; i < static_cast<size_t>(n); ++i)
    if (i % 3 == 0) xs[i] = pairs[i % 10][0], ys[i] = pairs[i % 10][1];
  auto run = [&](Device d) {
    auto [z, x, y] = exact_max_min(zeros<float>({2, n}, d).partition({2, 1024}),
                                   from_host(xs, {1, n}, d), from_host(ys, {1, n}, d))
                         .sync();
    return std::move(z).unpartition().to_vector();
  };
  const std::vector<float> cpu = run(Device::cpu()), gpu = run(Device::cuda(0));
  int bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const bool ok = std::isnan(cpu[i])
                        ? std::isnan(gpu[i])
                        : std::bit_cast<uint32_t>(cpu[i]) == std::bit_cast<uint32_t>(gpu[i]);
    const size_t e = i % static_cast<size_t>(n);
    if (!ok && bad++ < 5)
      ADD_FAILURE() << (i < static_cast<size_t>(n) ? "max(" : "min(") << xs[e] << ", " << ys[e]
                    << "): CPU " << cpu[i] << ", GPU " << gpu[i];
  }
  EXPECT_EQ(bad, 0);
}

TEST(FastNumerics, FastSoftmaxAgreesWithExactWithinAFewUlps) {
  const int64_t rows = 64, cols = 3000;  // ragged: the last tile's columns are padded with -inf
  const auto xs = uniform(rows * cols, -8, 8);
  auto run = [&](auto kernel) {
    auto [z, x] = kernel(zeros<float>({rows, cols}, Device::cuda(0)).partition({1, 4096}),
                         from_host(xs, {rows, cols}, Device::cuda(0)))
                      .sync();
    return std::move(z).unpartition().to_vector();
  };
  const auto exact = run(
      [](auto&&... a) { return softmax_policy<Numerics::exact>(std::forward<decltype(a)>(a)...); });
  const auto fast = run(
      [](auto&&... a) { return softmax_policy<Numerics::fast>(std::forward<decltype(a)>(a)...); });
  ASSERT_EQ(exact.size(), fast.size());
  int bad = 0;
  for (size_t i = 0; i < exact.size(); ++i)
    if (!(std::fabs(fast[i] - exact[i]) <= 1e-5 * exact[i] + 1e-12) && bad++ < 5)
      ADD_FAILURE() << "element " << i << ": exact " << exact[i] << ", fast " << fast[i];
  EXPECT_EQ(bad, 0);
}

}  // namespace

// The decode-shaped linear layers (w in nn.Linear's [N, K] layout) against a double-precision
// reference: a few rows of x, K longer than one chunk and not a multiple of it, N not a multiple
// of the rows a block owns.
#include <cmath>

#include <tessera/kernels/linear.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

constexpr int64_t M = 3, N = 45, K = 2100;

// x [m, k] @ w^T, w [n, k], in double.
std::vector<double> matmul_nt(const std::vector<double>& x, const std::vector<double>& w, int64_t m,
                              int64_t n, int64_t k) {
  std::vector<double> y(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) y[i * n + j] += x[i * k + p] * w[j * k + p];
  return y;
}

template <class T>
class LinearTest : public ::testing::Test {};
using Dtypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(LinearTest, Dtypes);

// Products of values in [-1, 1] summed in f32 over K terms, then one rounding to T.
template <class T>
void expect_linear_near(const Tensor<T, 2>& y, const std::vector<double>& want,
                        const std::string& what, int64_t k = K) {
  expect_near(widen(y.to_vector()), want, 2 * unit_roundoff<T>(), static_cast<double>(k) * 1e-6,
              what);
}

TYPED_TEST(LinearTest, PlainResidualAndSwigluMatchTheDoubleReference) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto x = random_values<T>(M * K, -1, 1, 11);
  const auto w = random_values<T>(N * K, -1, 1, 12);
  const auto u = random_values<T>(N * K, -1, 1, 13);
  const auto r = random_values<T>(M * N, -1, 1, 14);
  const auto tx = from_host(x, {M, K}, d), tw = from_host(w, {N, K}, d);
  const std::vector<double> xw = matmul_nt(widen(x), widen(w), M, N, K);
  const Tensor<T, 2> plain = kernels::linear(tx, tw);
  EXPECT_EQ(plain.shape(), (Shape{M, N}));
  expect_linear_near(plain, xw, "x w^T");
  std::vector<double> want = xw;
  const auto rd = widen(r);
  for (size_t i = 0; i < want.size(); ++i) want[i] += rd[i];
  expect_linear_near(kernels::linear(tx, tw, from_host(r, {M, N}, d)), want, "x w^T + residual");
  const std::vector<double> xu = matmul_nt(widen(x), widen(u), M, N, K);
  for (size_t i = 0; i < want.size(); ++i) want[i] = xw[i] / (1 + std::exp(-xw[i])) * xu[i];
  expect_linear_near(kernels::linear_swiglu(tx, tw, from_host(u, {N, K}, d)), want,
                     "silu(x w_gate^T) * (x w_up^T)");
}

// x w^T + residual for rows of k elements: up to 4096 the loop-free kernels, one row width each
// (1024, 2048, 3072, 4096; linear.cpp), exact widths and padded ones; past 4096 the loop.
TYPED_TEST(LinearTest, ResidualOverEveryRowWidthMatchesTheDoubleReference) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  for (const int64_t k :
       {int64_t{1000}, int64_t{2048}, int64_t{2500}, int64_t{3072}, int64_t{4096}, int64_t{4100}}) {
    const auto x = random_values<T>(M * k, -1, 1, 31);
    const auto w = random_values<T>(N * k, -1, 1, 32);
    const auto r = random_values<T>(M * N, -1, 1, 33);
    std::vector<double> want = matmul_nt(widen(x), widen(w), M, N, k);
    const auto rd = widen(r);
    for (size_t i = 0; i < want.size(); ++i) want[i] += rd[i];
    const Tensor<T, 2> y =
        kernels::linear(from_host(x, {M, k}, d), from_host(w, {N, k}, d), from_host(r, {M, N}, d));
    ASSERT_EQ(y.shape(), (Shape{M, N}));
    expect_linear_near(y, want, "x w^T + residual, K = " + std::to_string(k), k);
  }
}

// x's rows RMS-normalized (and rounded to T, as rms_norm's result is), then x w^T, and the
// SwiGLU pair on the same normalized rows, for rows of k elements.
template <class T>
void check_rms_norm_fused(int64_t k) {
  const Device d = test_device();
  const float eps = 1e-6f;
  const auto x = random_values<T>(M * k, -1, 1, 21);
  const auto nw = random_values<T>(k, 0.5, 1.5, 22);
  const auto w = random_values<T>(N * k, -1, 1, 23);
  const auto u = random_values<T>(N * k, -1, 1, 24);
  std::vector<double> normed = widen(x);
  const std::vector<double> nwd = widen(nw);
  for (int64_t i = 0; i < M; ++i) {
    double squares = 0;
    for (int64_t p = 0; p < k; ++p) squares += normed[i * k + p] * normed[i * k + p];
    const double inv_rms = 1 / std::sqrt(squares / static_cast<double>(k) + eps);
    for (int64_t p = 0; p < k; ++p) {
      const double v = normed[i * k + p] * inv_rms * nwd[p];
      normed[i * k + p] = static_cast<double>(static_cast<float>(T(static_cast<float>(v))));
    }
  }
  const auto tx = from_host(x, {M, k}, d), tw = from_host(w, {N, k}, d);
  const auto tnw = from_host(nw, d);
  const Tensor<T, 2> y = kernels::linear_rms_norm(tx, tnw, eps, tw);
  EXPECT_EQ(y.shape(), (Shape{M, N}));
  const std::vector<double> xw = matmul_nt(normed, widen(w), M, N, k);
  expect_linear_near(y, xw, "rms_norm(x) w^T", k);
  const std::vector<double> xu = matmul_nt(normed, widen(u), M, N, k);
  std::vector<double> want(xw.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = xw[i] / (1 + std::exp(-xw[i])) * xu[i];
  // A normalized element the kernel (f32) and the reference (double) round to neighbouring T
  // values moves each dot by ~an ulp of T; the product carries each factor's error times the
  // other factor, so the bound is the dots' bound scaled by 1 + |gate| + |up|.
  auto expect_swiglu = [&](const std::vector<double>& got, const std::string& what) {
    ASSERT_EQ(got.size(), want.size());
    int bad = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double bound =
          2 * unit_roundoff<T>() * std::fabs(want[i]) +
          (1 + std::fabs(xw[i]) + std::fabs(xu[i])) * static_cast<double>(k) * 1e-6;
      if (!(std::fabs(got[i] - want[i]) <= bound) && bad++ < 5)
        ADD_FAILURE() << what << ", K = " << k << ": element " << i << " is " << got[i]
                      << ", the reference is " << want[i] << " (bound " << bound << ", seed "
                      << test_seed() << ")";
    }
    EXPECT_EQ(bad, 0);
  };
  const auto tu = from_host(u, {N, k}, d);
  expect_swiglu(widen(kernels::linear_swiglu_rms_norm(tx, tnw, eps, tw, tu).to_vector()),
                "silu(rms_norm(x) w_gate^T) * (rms_norm(x) w_up^T)");
  // The paired form: gate and up rows interleaved (checked row by row), the same values.
  const Tensor<T, 2> pairs = kernels::interleave_rows(tw, tu);
  ASSERT_EQ(pairs.shape(), (Shape{2 * N, k}));
  const std::vector<T> pv = pairs.to_vector();
  for (int64_t i = 0; i < N; ++i)
    for (int64_t p = 0; p < k; ++p) {
      ASSERT_EQ(static_cast<float>(pv[(2 * i) * k + p]), static_cast<float>(w[i * k + p]));
      ASSERT_EQ(static_cast<float>(pv[(2 * i + 1) * k + p]), static_cast<float>(u[i * k + p]));
    }
  expect_swiglu(widen(kernels::linear_swiglu_rms_norm_paired(tx, tnw, eps, pairs).to_vector()),
                "linear_swiglu_rms_norm_paired");
}

TYPED_TEST(LinearTest, RmsNormFusedEqualsTheNormThenTheProduct) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_rms_norm_fused<TypeParam>(K);
}

// Rows of at most 1024 elements take the loop-free kernels (linear.cpp's kWhole); 1000 leaves
// the tile's last 24 columns padded.
TYPED_TEST(LinearTest, RmsNormFusedOverShortRowsEqualsTheNormThenTheProduct) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_rms_norm_fused<TypeParam>(1000);
}

TEST(LinearArguments, AWeightInTheOtherLayoutIsRefusedWithBothShapes) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto x = from_host(std::vector<float>(2 * 8, 1.0f), {2, 8}, d);
  const auto w = from_host(std::vector<float>(8 * 5, 1.0f), {8, 5}, d);
  const std::string message = error_of<UsageError>([&] { (void)kernels::linear(x, w); });
  EXPECT_NE(message.find("linear: 'x' is [2, 8] and 'w' is [8, 5]; x [M, K] needs w [N, K]"),
            std::string::npos)
      << message;
  const auto ones = from_host(std::vector<float>(5 * 8, 1.0f), {5, 8}, d);
  const std::vector<float> y = kernels::linear(x, ones).to_vector();
  for (float e : y) EXPECT_EQ(e, 8.0f);
}

}  // namespace
}  // namespace tessera::test

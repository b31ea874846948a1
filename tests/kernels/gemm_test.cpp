// GEMM with each fused epilogue (bias, activation, residual) and the gated SwiGLU GEMM, against a
// double-precision reference, on shapes that are not multiples of the 64 x 64 x 32 tiles.
#include <tessera/kernels/gemm.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using kernels::Activation;

constexpr int64_t M = 70, N = 90, K = 100;

double activate(double x, Activation act) {
  switch (act) {
    case Activation::none:
      return x;
    case Activation::relu:
      return std::max(x, 0.0);
    case Activation::silu:
      return x / (1 + std::exp(-x));
    case Activation::gelu_tanh:
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  }
  return x;
}

// a [m, k] @ b [k, n] in double.
std::vector<double> matmul(const std::vector<double>& a, const std::vector<double>& b, int64_t m,
                           int64_t n, int64_t k) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

template <class T>
class GemmTest : public ::testing::Test {};
using Dtypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(GemmTest, Dtypes);

// Products of values in [-1, 1] summed in f32 over K terms, then one rounding to T.
template <class T>
void expect_gemm_near(const Tensor<T, 2>& c, const std::vector<double>& want,
                      const std::string& what) {
  expect_near(widen(c.to_vector()), want, 2 * unit_roundoff<T>(), static_cast<double>(K) * 1e-6,
              what);
}

TYPED_TEST(GemmTest, EachEpilogueMatchesTheDoubleReference) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto a = random_values<T>(M * K, -1, 1, 1);
  const auto b = random_values<T>(K * N, -1, 1, 2);
  const auto bias = random_values<T>(N, -1, 1, 3);
  const auto res = random_values<T>(M * N, -1, 1, 4);
  const auto ta = from_host(a, {M, K}, d), tb = from_host(b, {K, N}, d);
  const std::vector<double> ab = matmul(widen(a), widen(b), M, N, K);
  const auto biasd = widen(bias), resd = widen(res);
  struct Case {
    bool bias;
    Activation act;
    bool residual;
    const char* name;
  };
  for (const Case& cs : {Case{false, Activation::none, false, "plain"},
                         Case{true, Activation::gelu_tanh, false, "bias + gelu"},
                         Case{false, Activation::silu, true, "silu + residual"},
                         Case{true, Activation::relu, true, "bias + relu + residual"}}) {
    kernels::Epilogue<T> e;
    e.activation = cs.act;
    if (cs.bias) e.bias = from_host(bias, d);
    if (cs.residual) e.residual = from_host(res, {M, N}, d);
    std::vector<double> want(ab.size());
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        want[i * N + j] = activate(ab[i * N + j] + (cs.bias ? biasd[j] : 0), cs.act) +
                          (cs.residual ? resd[i * N + j] : 0);
    expect_gemm_near(kernels::gemm(ta, tb, e), want, cs.name);
  }
}

TYPED_TEST(GemmTest, GatedSwigluGemmIsSiluOfTheGateProductTimesTheUpProduct) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto x = random_values<T>(M * K, -1, 1, 5);
  const auto wg = random_values<T>(K * N, -1, 1, 6);
  const auto wu = random_values<T>(K * N, -1, 1, 7);
  const auto g = matmul(widen(x), widen(wg), M, N, K), u = matmul(widen(x), widen(wu), M, N, K);
  std::vector<double> want(g.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = activate(g[i], Activation::silu) * u[i];
  expect_gemm_near(kernels::gemm_swiglu(from_host(x, {M, K}, d), from_host(wg, {K, N}, d),
                                        from_host(wu, {K, N}, d)),
                   want, "gemm_swiglu");
}

TEST(GemmArguments, MismatchedInnerDimensionsAreRefusedAndMatchingOnesRun) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto a = from_host(std::vector<float>(4 * 3, 1.0f), {4, 3}, d);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::gemm(a, from_host(std::vector<float>(4 * 5, 1.0f), {4, 5}, d));
  });
  EXPECT_NE(message.find("gemm: the inner dimensions differ: 'a' is [4, 3] and 'b' is [4, 5]"),
            std::string::npos)
      << message;
  const auto c = kernels::gemm(a, from_host(std::vector<float>(3 * 5, 1.0f), {3, 5}, d));
  EXPECT_EQ(c.to_vector(), std::vector<float>(4 * 5, 3.0f));
}

TEST(GemmArguments, ABiasOfTheWrongLengthIsRefusedAndTheRightOneRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto a = from_host(std::vector<float>(2 * 3, 1.0f), {2, 3}, d);
  const auto b = from_host(std::vector<float>(3 * 4, 1.0f), {3, 4}, d);
  kernels::Epilogue<float> e;
  e.bias = from_host(std::vector<float>(3, 1.0f), d);
  const std::string message = error_of<UsageError>([&] { (void)kernels::gemm(a, b, e); });
  EXPECT_NE(message.find("gemm: 'bias' has shape [3] but must have shape [4]"), std::string::npos)
      << message;
  e.bias = from_host(std::vector<float>(4, 1.0f), d);
  EXPECT_EQ(kernels::gemm(a, b, e).to_vector(), std::vector<float>(2 * 4, 4.0f));
}

}  // namespace
}  // namespace tessera::test

// RMSNorm and LayerNorm (and their residual-fused forms) against a double-precision reference, in
// f32, f16 and bf16, over the last axis of rank-2 activations and rank-3 per-head tensors.
#include <tessera/kernels/norm.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using kernels::add_layer_norm;
using kernels::add_rms_norm;
using kernels::layer_norm;
using kernels::rms_norm;

constexpr float kEps = 1e-5f;

template <class T>
class NormTest : public ::testing::Test {};
using Dtypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(NormTest, Dtypes);

// The norm of each row of `x` (rows of `cols`), in double.
std::vector<double> reference_norm(const std::vector<double>& x, int64_t cols,
                                   const std::vector<double>& w, const std::vector<double>* b) {
  std::vector<double> out(x.size());
  for (size_t r = 0; r < x.size() / static_cast<size_t>(cols); ++r) {
    const double* v = &x[r * cols];
    double mean = 0, square = 0;
    for (int64_t c = 0; c < cols; ++c) mean += v[c], square += v[c] * v[c];
    mean /= static_cast<double>(cols);
    double var = 0;
    for (int64_t c = 0; c < cols; ++c) var += (v[c] - mean) * (v[c] - mean);
    var /= static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c)
      out[r * cols + c] = b ? (v[c] - mean) / std::sqrt(var + kEps) * w[c] + (*b)[c]
                            : v[c] / std::sqrt(square / static_cast<double>(cols) + kEps) * w[c];
  }
  return out;
}

// One rounding to T, the f32 arithmetic before it (sums over ~100 terms), and for LayerNorm the
// cancellation of terms of size ~1 to a result near zero.
template <class T>
double rel_bound() {
  return 2 * unit_roundoff<T>() + 2e-5;
}
constexpr double kAbsBound = 2e-5;

TYPED_TEST(NormTest, RmsNormOfEachRowMatchesTheDoubleReference) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t rows = 5, cols = 96;
  const auto x = random_values<T>(rows * cols, -3, 3, 1);
  const auto w = random_values<T>(cols, 0.5, 1.5, 2);
  const Device d = test_device();
  const Tensor<T, 2> y = rms_norm(from_host(x, {rows, cols}, d), from_host(w, d), kEps);
  ASSERT_EQ(y.shape(), (Shape{rows, cols}));
  expect_near(widen(y.to_vector()), reference_norm(widen(x), cols, widen(w), nullptr),
              rel_bound<T>(), kAbsBound, "rms_norm");
}

TYPED_TEST(NormTest, RmsNormOfPerHeadRowsNormalizesTheLastAxisOfARank3Tensor) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t tokens = 3, heads = 4, dim = 64;  // QK-norm: one row per (token, head)
  const auto x = random_values<T>(tokens * heads * dim, -3, 3, 3);
  const auto w = random_values<T>(dim, 0.5, 1.5, 4);
  const Device d = test_device();
  const Tensor<T, 3> y = rms_norm(from_host(x, {tokens, heads, dim}, d), from_host(w, d), kEps);
  expect_near(widen(y.to_vector()), reference_norm(widen(x), dim, widen(w), nullptr),
              rel_bound<T>(), kAbsBound, "rms_norm rank 3");
}

// The QK-norm of a stacked projection's heads [first, first + count), split and normalized in one
// launch: the same values as normalizing those heads of [T, H, D].
TYPED_TEST(NormTest, RmsNormHeadsNormalizesARangeOfHeadsOfARank2Tensor) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t tokens = 3, heads = 6, dim = 64, first = 2, count = 3;
  const auto x = random_values<T>(tokens * heads * dim, -3, 3, 5);
  const auto w = random_values<T>(dim, 0.5, 1.5, 6);
  const Device d = test_device();
  const Tensor<T, 3> y = kernels::rms_norm_heads(from_host(x, {tokens, heads * dim}, d),
                                                 from_host(w, d), kEps, first, count);
  ASSERT_EQ(y.shape(), (Shape{tokens, count, dim}));
  std::vector<double> part;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t e = first * dim; e < (first + count) * dim; ++e)
      part.push_back(static_cast<float>(x[t * heads * dim + e]));
  expect_near(widen(y.to_vector()), reference_norm(part, dim, widen(w), nullptr), rel_bound<T>(),
              kAbsBound, "rms_norm_heads");
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::rms_norm_heads(from_host(x, {tokens, heads * dim}, d), from_host(w, d), kEps, 4,
                                  3);
  });
  EXPECT_NE(message.find("rms_norm_heads: heads [4, 7) of 64 elements (the weight's) do not fit "
                         "rows of 384 elements"),
            std::string::npos)
      << message;
}

TYPED_TEST(NormTest, LayerNormOfEachRowMatchesTheDoubleReference) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t rows = 7, cols = 80;
  const auto x = random_values<T>(rows * cols, -2, 4, 5);  // a non-zero mean
  const auto w = random_values<T>(cols, 0.5, 1.5, 6);
  const auto b = random_values<T>(cols, -1, 1, 7);
  const Device d = test_device();
  const Tensor<T, 2> y =
      layer_norm(from_host(x, {rows, cols}, d), from_host(w, d), from_host(b, d), kEps);
  const auto wb = widen(b);
  expect_near(widen(y.to_vector()), reference_norm(widen(x), cols, widen(w), &wb), rel_bound<T>(),
              kAbsBound, "layer_norm");
}

// x + residual, rounded to T as the unfused add would round it.
template <class T>
std::vector<double> rounded_sum(const std::vector<T>& x, const std::vector<T>& r) {
  std::vector<double> s(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    s[i] = static_cast<float>(T(static_cast<float>(x[i]) + static_cast<float>(r[i])));
  return s;
}

TYPED_TEST(NormTest, AddRmsNormReturnsTheRoundedSumAndItsNorm) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t rows = 4, cols = 72;
  const auto x = random_values<T>(rows * cols, -2, 2, 8);
  const auto r = random_values<T>(rows * cols, -2, 2, 9);
  const auto w = random_values<T>(cols, 0.5, 1.5, 10);
  const Device d = test_device();
  const auto [y, h] = add_rms_norm(from_host(x, {rows, cols}, d), from_host(r, {rows, cols}, d),
                                   from_host(w, d), kEps);
  const std::vector<double> sum = rounded_sum(x, r);
  expect_near(widen(h.to_vector()), sum, 0, 0, "add_rms_norm sum");
  expect_near(widen(y.to_vector()), reference_norm(sum, cols, widen(w), nullptr), rel_bound<T>(),
              kAbsBound, "add_rms_norm normed");
}

TYPED_TEST(NormTest, AddLayerNormReturnsTheRoundedSumAndItsNorm) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t rows = 3, cols = 100;
  const auto x = random_values<T>(rows * cols, -2, 2, 11);
  const auto r = random_values<T>(rows * cols, -1, 3, 12);
  const auto w = random_values<T>(cols, 0.5, 1.5, 13);
  const auto b = random_values<T>(cols, -1, 1, 14);
  const Device d = test_device();
  const auto [y, h] = add_layer_norm(from_host(x, {rows, cols}, d), from_host(r, {rows, cols}, d),
                                     from_host(w, d), from_host(b, d), kEps);
  const std::vector<double> sum = rounded_sum(x, r);
  const auto wb = widen(b);
  expect_near(widen(h.to_vector()), sum, 0, 0, "add_layer_norm sum");
  expect_near(widen(y.to_vector()), reference_norm(sum, cols, widen(w), &wb), rel_bound<T>(),
              kAbsBound, "add_layer_norm normed");
}

TYPED_TEST(NormTest, ManyMoreRowsThanBlocksOfAStridedViewMatchTheDoubleReference) {
  // On the GPU a norm walks its rows with a persistent grid (a few blocks per multiprocessor),
  // and each row's load prefetches the block's next row into L2: here every block walks several
  // rows of a column slice whose rows are further apart than they are long, and the last rows
  // have no next row to prefetch. The fused residual form loads (and prefetches) two inputs.
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t rows = 2053, cols = 4096, stride = cols + 64;
  const auto xs = random_values<T>(rows * stride, -3, 3, 21);
  const auto rs = random_values<T>(rows * stride, -1, 1, 22);
  const auto w = random_values<T>(cols, 0.5, 1.5, 23);
  std::vector<T> x, r;  // the viewed columns, for the reference
  for (int64_t i = 0; i < rows; ++i) {
    x.insert(x.end(), xs.begin() + i * stride, xs.begin() + i * stride + cols);
    r.insert(r.end(), rs.begin() + i * stride, rs.begin() + i * stride + cols);
  }
  const Device d = test_device();
  const Tensor<T, 2> xv = from_host(xs, {rows, stride}, d).slice(1, 0, cols);
  const Tensor<T, 2> rv = from_host(rs, {rows, stride}, d).slice(1, 0, cols);
  const Tensor<T, 2> y = rms_norm(xv, from_host(w, d), kEps);
  ASSERT_EQ(y.shape(), (Shape{rows, cols}));
  expect_near(widen(y.to_vector()), reference_norm(widen(x), cols, widen(w), nullptr),
              rel_bound<T>(), kAbsBound, "rms_norm");
  const auto [y2, h] = add_rms_norm(xv, rv, from_host(w, d), kEps);
  const std::vector<double> sum = rounded_sum(x, r);
  expect_near(widen(h.to_vector()), sum, 0, 0, "add_rms_norm sum");
  expect_near(widen(y2.to_vector()), reference_norm(sum, cols, widen(w), nullptr), rel_bound<T>(),
              kAbsBound, "add_rms_norm");
}

TEST(NormArguments, AWeightShorterThanTheRowIsRefusedAndTheRightOneRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto x = from_host(random_values<float>(2 * 8, -1, 1, 15), {2, 8}, d);
  const std::string message = error_of<UsageError>(
      [&] { (void)rms_norm(x, from_host(std::vector<float>(7, 1.0f), d), kEps); });
  EXPECT_NE(message.find("rms_norm: 'weight' has shape [7] but must have shape [8]"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("norm_test.cpp"), std::string::npos)
      << "at the caller's line: " << message;
  // The twin: a weight as long as the row.
  EXPECT_EQ(rms_norm(x, from_host(std::vector<float>(8, 1.0f), d), kEps).shape(), (Shape{2, 8}));
}

TEST(NormArguments, AResidualOfAnotherShapeIsRefusedAndTheRightOneRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto x = from_host(random_values<float>(2 * 8, -1, 1, 16), {2, 8}, d);
  const auto w = from_host(std::vector<float>(8, 1.0f), d);
  const std::string message = error_of<UsageError>([&] {
    (void)add_rms_norm(x, from_host(std::vector<float>(3 * 8, 1.0f), {3, 8}, d), w, kEps);
  });
  EXPECT_NE(message.find("add_rms_norm: 'residual' has shape [3, 8] but must have shape [2, 8]"),
            std::string::npos)
      << message;
  EXPECT_EQ(add_rms_norm(x, x, w, kEps).sum.shape(), (Shape{2, 8}));
}

}  // namespace
}  // namespace tessera::test

// SwiGLU and softmax against double-precision references, in f32, f16 and bf16.
#include <tessera/kernels/elementwise.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

template <class T>
class ElementwiseTest : public ::testing::Test {};
using Dtypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(ElementwiseTest, Dtypes);

TYPED_TEST(ElementwiseTest, SwigluIsSiluOfTheGateTimesUp) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  // 2500 columns: more than one tile of the last axis (1024), the last one ragged.
  const int64_t rows = 3, cols = 2500;
  const auto g = random_values<T>(rows * cols, -8, 8, 1);
  const auto u = random_values<T>(rows * cols, -2, 2, 2);
  const Device d = test_device();
  const Tensor<T, 2> y =
      kernels::swiglu(from_host(g, {rows, cols}, d), from_host(u, {rows, cols}, d));
  const auto gd = widen(g), ud = widen(u);
  std::vector<double> want(gd.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = gd[i] / (1 + std::exp(-gd[i])) * ud[i];
  expect_near(widen(y.to_vector()), want, 2 * unit_roundoff<T>() + 1e-6, subnormal_spacing<T>(),
              "swiglu");
}

TYPED_TEST(ElementwiseTest, SoftmaxOfEachRowMatchesTheDoubleReference) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t rows = 2, heads = 3, cols = 77;  // rank 3: attention scores [rows, heads, keys]
  const auto x = random_values<T>(rows * heads * cols, -6, 6, 3);
  const Tensor<T, 3> y = kernels::softmax(from_host(x, {rows, heads, cols}, test_device()));
  const auto xd = widen(x);
  std::vector<double> want(xd.size());
  for (int64_t r = 0; r < rows * heads; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max(m, xd[r * cols + c]);
    for (int64_t c = 0; c < cols; ++c) s += std::exp(xd[r * cols + c] - m);
    for (int64_t c = 0; c < cols; ++c) want[r * cols + c] = std::exp(xd[r * cols + c] - m) / s;
  }
  // One rounding to T after a few f32 ones; absolutely, f16's subnormal spacing for the tiniest.
  expect_near(widen(y.to_vector()), want, 2 * unit_roundoff<T>() + 1e-6, 1e-7, "softmax");
}

TEST(ElementwiseArguments, SwigluOfTwoShapesIsRefusedAndOfOneShapeRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto g = from_host(std::vector<float>(6, 1.0f), {2, 3}, d);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::swiglu(g, from_host(std::vector<float>(6, 1.0f), {3, 2}, d));
  });
  EXPECT_NE(message.find("swiglu: 'up' has shape [3, 2] but must have shape [2, 3]"),
            std::string::npos)
      << message;
  const std::vector<float> y = kernels::swiglu(g, g).to_vector();
  EXPECT_FLOAT_EQ(y[0], static_cast<float>(1 / (1 + std::exp(-1.0))));
}

}  // namespace
}  // namespace tessera::test

// Embedding lookup and argmax (greedy sampling), exactly: both only move or compare values.
#include <tessera/kernels/elementwise.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

template <class T>
class LookupTest : public ::testing::Test {};
using Dtypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(LookupTest, Dtypes);

TYPED_TEST(LookupTest, EmbeddingCopiesTheRowOfEachId) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t vocab = 50, dim = 24;
  const auto table = random_values<T>(vocab * dim, -1, 1, 1);
  const std::vector<int32_t> ids{7, 0, 49, 7, 13};  // repeats, both ends of the table
  const Device d = test_device();
  const Tensor<T, 2> y = kernels::embedding(from_host(table, {vocab, dim}, d), from_host(ids, d));
  ASSERT_EQ(y.shape(), (Shape{5, dim}));
  std::vector<double> want;
  for (int32_t id : ids)
    for (int64_t c = 0; c < dim; ++c) want.push_back(static_cast<float>(table[id * dim + c]));
  expect_near(widen(y.to_vector()), want, 0, 0, "embedding");
}

TEST(LookupArguments, AnIdPastTheTableIsABoundsErrorAndAnIdInsideRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto table = from_host(random_values<float>(4 * 8, -1, 1, 2), {4, 8}, d);
  const std::string message = error_of<BoundsError>([&] {
    (void)kernels::embedding(table, from_host(std::vector<int32_t>{1, 4}, d));
  });
  EXPECT_NE(message.find("'table'"), std::string::npos) << message;
  EXPECT_EQ(kernels::embedding(table, from_host(std::vector<int32_t>{1, 3}, d)).shape(),
            (Shape{2, 8}));
}

// The first index of the row's max, in double over the T values.
template <class T>
std::vector<int32_t> reference_argmax(const std::vector<T>& x, int64_t rows, int64_t cols) {
  std::vector<int32_t> out;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t best = 0;
    for (int64_t c = 1; c < cols; ++c)
      if (static_cast<float>(x[r * cols + c]) > static_cast<float>(x[r * cols + best])) best = c;
    out.push_back(static_cast<int32_t>(best));
  }
  return out;
}

TYPED_TEST(LookupTest, ArgmaxFindsTheFirstIndexOfEachRowsMax) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  // 2500 columns: three chunks of 1024, the last ragged. The max sits in different chunks.
  const int64_t rows = 4, cols = 2500;
  auto x = random_values<T>(rows * cols, -4, 4, 3);
  x[0 * cols + 5] = T(9.0f);
  x[1 * cols + 1500] = T(9.0f);
  x[2 * cols + 2499] = T(9.0f);  // the last column
  x[3 * cols + 2000] = T(9.0f);
  x[3 * cols + 1100] = T(9.0f);  // a tie across chunks: the earlier index wins
  const Tensor<int32_t, 1> y = kernels::argmax(from_host(x, {rows, cols}, test_device()));
  EXPECT_EQ(y.to_vector(), reference_argmax(x, rows, cols));
  EXPECT_EQ(y.to_vector(), (std::vector<int32_t>{5, 1500, 2499, 1100}));
}

TEST(LookupArgmax, ANanCountsAsTheLargestAndANegativeInfinityRowGivesIndexZero) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t cols = 1500;
  std::vector<float> x(3 * cols, 1.0f);
  x[0 * cols + 7] = 5.0f;
  x[0 * cols + 1200] = NAN;  // after a larger number, in a later chunk
  x[1 * cols + 3] = NAN;
  x[1 * cols + 4] = NAN;
  for (int64_t c = 0; c < cols; ++c) x[2 * cols + c] = -INFINITY;
  const auto y = kernels::argmax(from_host(x, {3, cols}, test_device())).to_vector();
  EXPECT_EQ(y, (std::vector<int32_t>{1200, 3, 0}));
}

}  // namespace
}  // namespace tessera::test

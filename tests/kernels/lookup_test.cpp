// Embedding lookup and argmax (greedy sampling), exactly: both only move or compare values.
#include <tessera/kernels/elementwise.hpp>

#include <algorithm>
#include <limits>

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

// A row longer than one block's part (4 chunks of 1024) is split over blocks and combined: the max
// in a middle part, in the last ragged one, a tie across parts (the earlier wins), a NaN after a
// larger number (the NaN wins, as torch.argmax).
TYPED_TEST(LookupTest, ArgmaxOfLongRowsCombinesThePartsInOrder) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t rows = 4, cols = 3 * 4096 + 77;
  auto x = random_values<T>(rows * cols, -4, 4, 5);
  x[0 * cols + 5000] = T(9.0f);
  x[1 * cols + cols - 1] = T(9.0f);
  x[2 * cols + 9000] = T(9.0f);
  x[2 * cols + 4100] = T(9.0f);
  x[3 * cols + 10] = T(9.0f);
  x[3 * cols + 8200] = T(std::numeric_limits<float>::quiet_NaN());
  const Tensor<int32_t, 1> y = kernels::argmax(from_host(x, {rows, cols}, test_device()));
  EXPECT_EQ(y.to_vector(),
            (std::vector<int32_t>{5000, static_cast<int32_t>(cols - 1), 4100, 8200}));
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

// The k largest of a row (value descending, ties by index) and their cumulative probabilities
// under softmax(value / temperature), in double.
struct Kept {
  std::vector<int32_t> index;
  std::vector<double> cumulative;  // normalized: the last is 1
};
Kept reference_top_k(const std::vector<double>& row, int k, double temperature) {
  std::vector<int32_t> order(row.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return row[a] > row[b]; });
  Kept kept;
  double total = 0;
  for (int i = 0; i < k; ++i) {
    kept.index.push_back(order[i]);
    total += std::exp((row[order[i]] - row[order[0]]) / temperature);
    kept.cumulative.push_back(total);
  }
  for (double& c : kept.cumulative) c /= total;
  return kept;
}

TYPED_TEST(LookupTest, TopKSampleDrawsEachKeptTokenForADrawInsideItsShare) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const int64_t rows = 3, cols = 2500;  // three chunks of 1024
  const int k = 5;
  const float temperature = 0.7f;
  auto x = random_values<T>(rows * cols, -3, 3, 40);
  x[1 * cols + 2000] = T(3.5f);                      // the best of row 1 in its last chunk
  x[2 * cols + 10] = x[2 * cols + 1500] = T(3.25f);  // a tie across chunks: index 10 first
  const auto xd = widen(x);
  std::vector<Kept> kept;
  for (int64_t r = 0; r < rows; ++r)
    kept.push_back(reference_top_k(
        std::vector<double>(xd.begin() + r * cols, xd.begin() + (r + 1) * cols), k, temperature));
  EXPECT_EQ(kept[2].index[0], 10);
  EXPECT_EQ(kept[2].index[1], 1500);
  const auto logits = from_host(x, {rows, cols}, d);
  for (int slot = 0; slot < k; ++slot) {
    // A draw in the middle of each row's slot-th share picks that slot's token.
    std::vector<float> u;
    std::vector<int32_t> want;
    for (const Kept& e : kept) {
      const double lo = slot == 0 ? 0 : e.cumulative[slot - 1];
      u.push_back(static_cast<float>((lo + e.cumulative[slot]) / 2));
      want.push_back(e.index[slot]);
    }
    EXPECT_EQ(kernels::top_k_sample(logits, k, temperature, from_host(u, d)).to_vector(), want)
        << "slot " << slot;
  }
  // k = 1 is greedy.
  EXPECT_EQ(
      kernels::top_k_sample(logits, 1, temperature, from_host(std::vector<float>(rows, 0.99f), d))
          .to_vector(),
      kernels::argmax(logits).to_vector());
}

TEST(LookupArguments, ATopKLargerThanTheListIsRefusedAndTheLargestAllowedRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto logits = from_host(random_values<float>(2 * 100, -1, 1, 41), {2, 100}, d);
  const auto u = from_host(std::vector<float>{0.5f, 0.5f}, d);
  const std::string message =
      error_of<UsageError>([&] { (void)kernels::top_k_sample(logits, 65, 1.0f, u); });
  EXPECT_NE(message.find("top_k_sample: k is 65 but must be in [1, 64]"), std::string::npos)
      << message;
  const std::vector<int32_t> tokens = kernels::top_k_sample(logits, 64, 1.0f, u).to_vector();
  ASSERT_EQ(tokens.size(), 2u);
  for (int32_t t : tokens) EXPECT_TRUE(t >= 0 && t < 100) << t;
}

}  // namespace
}  // namespace tessera::test

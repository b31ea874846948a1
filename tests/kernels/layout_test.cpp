// Layout copies and KV-cache writes move values exactly.
#include <tessera/kernels/layout.hpp>

#include <algorithm>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

TEST(Layout, SplitHeadsAndMergeHeadsKeepEveryElementInPlace) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t tokens = 3, heads = 4, dim = 8;
  const auto x = random_values<half>(tokens * heads * dim, -1, 1, 1);
  const auto t = from_host(x, {tokens, heads * dim}, test_device());
  const Tensor<half, 3> split = kernels::split_heads(t, dim);
  EXPECT_EQ(split.shape(), (Shape{tokens, heads, dim}));
  EXPECT_EQ(widen(split.to_vector()), widen(x));  // row-major: the same order
  const Tensor<half, 2> merged = kernels::merge_heads(split);
  EXPECT_EQ(merged.shape(), (Shape{tokens, heads * dim}));
  EXPECT_EQ(widen(merged.to_vector()), widen(x));
}

// A stacked projection's output (q, k, v heads side by side) taken apart by head ranges.
TEST(Layout, SplitHeadsOfARangeCopiesThoseHeadsOnly) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t tokens = 2, heads = 5, dim = 8, first = 3, count = 2;
  const auto x = random_values<float>(tokens * heads * dim, -1, 1, 6);
  const Tensor<float, 3> part =
      kernels::split_heads(from_host(x, {tokens, heads * dim}, test_device()), dim, first, count);
  EXPECT_EQ(part.shape(), (Shape{tokens, count, dim}));
  std::vector<float> want;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t e = first * dim; e < (first + count) * dim; ++e)
      want.push_back(x[t * heads * dim + e]);
  EXPECT_EQ(part.to_vector(), want);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::split_heads(from_host(x, {tokens, heads * dim}, test_device()), dim, 4, 2);
  });
  EXPECT_NE(message.find("split_heads: heads [4, 6) of 8 elements do not fit rows of 40 elements"),
            std::string::npos)
      << message;
}

TEST(Layout, KvCacheWriteReplacesOnlyTheGivenPositions) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const int64_t batch = 2, positions = 6, heads = 2, dim = 4, n = 2, start = 3;
  const auto old = random_values<float>(batch * positions * heads * dim, -1, 1, 2);
  const auto fresh = random_values<float>(batch * n * heads * dim, 2, 3, 3);
  const auto cache = from_host(old, {batch, positions, heads, dim}, d);
  const auto out =
      kernels::kv_cache_write(cache, from_host(fresh, {batch, n, heads, dim}, d), start)
          .to_vector();
  std::vector<float> want = old;
  const int64_t row = heads * dim;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t p = 0; p < n; ++p)
      for (int64_t e = 0; e < row; ++e)
        want[(b * positions + start + p) * row + e] = fresh[(b * n + p) * row + e];
  EXPECT_EQ(out, want);
  // A batch of one takes [n, H, D].
  const auto one =
      from_host(std::vector<float>(positions * row, 0.0f), {1, positions, heads, dim}, d);
  const auto written =
      kernels::kv_cache_write(one, from_host(std::vector<float>(row, 7.0f), {1, heads, dim}, d), 5)
          .to_vector();
  for (int64_t e = 0; e < positions * row; ++e)
    EXPECT_EQ(written[e], e >= 5 * row ? 7.0f : 0.0f) << e;
}

// The in-place append: each sequence's rows land at its own start (here across the boundary of
// two chunks of kAppendChunk positions), every other position keeps its value, and a start whose
// rows would pass the end drops those rows instead of writing anywhere else.
TEST(Layout, KvCacheAppendWritesOnlyTheNewPositionsInPlace) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const int64_t batch = 3, positions = 2 * kernels::kAppendChunk + 5, heads = 2, dim = 8, n = 3;
  const std::vector<int32_t> starts{static_cast<int32_t>(kernels::kAppendChunk) - 2, 0,
                                    static_cast<int32_t>(positions) - 1};
  const auto old = random_values<float>(batch * positions * heads * dim, -1, 1, 4);
  const auto fresh = random_values<float>(batch * n * heads * dim, 2, 3, 5);
  auto cache = from_host(old, {batch, positions, heads, dim}, d);
  kernels::kv_cache_append(cache, from_host(fresh, {batch, n, heads, dim}, d),
                           from_host(starts, d));
  std::vector<float> want = old;
  const int64_t row = heads * dim;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t p = 0; p < n; ++p)
      if (starts[b] + p < positions)
        for (int64_t e = 0; e < row; ++e)
          want[(b * positions + starts[b] + p) * row + e] = fresh[(b * n + p) * row + e];
  EXPECT_EQ(cache.to_vector(), want);
  // A batch of one takes [n, H, D]; decode steps append one position after another.
  auto one = from_host(std::vector<float>(positions * row, 0.0f), {1, positions, heads, dim}, d);
  for (int32_t p = 0; p < 3; ++p)
    kernels::kv_cache_append(
        one, from_host(std::vector<float>(row, static_cast<float>(p + 1)), {1, heads, dim}, d),
        from_host(std::vector<int32_t>{p + 70}, d));
  const auto written = one.to_vector();
  for (int64_t e = 0; e < positions * row; ++e) {
    const int64_t p = e / row;
    EXPECT_EQ(written[e], p >= 70 && p < 73 ? static_cast<float>(p - 69) : 0.0f) << e;
  }
}

// Keys and values in one launch: each cache gets its own fresh rows at the same positions.
TEST(Layout, KvCacheAppendOfKeysAndValuesWritesBothCaches) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const int64_t positions = kernels::kAppendChunk + 9, heads = 2, dim = 8, row = heads * dim;
  auto k_cache =
      from_host(std::vector<float>(positions * row, -1.0f), {1, positions, heads, dim}, d);
  auto v_cache =
      from_host(std::vector<float>(positions * row, -2.0f), {1, positions, heads, dim}, d);
  const auto k = random_values<float>(2 * row, 0, 1, 7), v = random_values<float>(2 * row, 1, 2, 8);
  const int32_t at = static_cast<int32_t>(kernels::kAppendChunk) - 1;  // across two chunks
  kernels::kv_cache_append(k_cache, v_cache, from_host(k, {2, heads, dim}, d),
                           from_host(v, {2, heads, dim}, d),
                           from_host(std::vector<int32_t>{at}, d));
  std::vector<float> want_k(positions * row, -1.0f), want_v(positions * row, -2.0f);
  std::copy(k.begin(), k.end(), want_k.begin() + at * row);
  std::copy(v.begin(), v.end(), want_v.begin() + at * row);
  EXPECT_EQ(k_cache.to_vector(), want_k);
  EXPECT_EQ(v_cache.to_vector(), want_v);
  // A v_cache that cannot be written (a second handle) is refused and leaves k_cache usable.
  const Tensor<float, 4> reader = v_cache;
  (void)error_of<OwnershipError>([&] {
    kernels::kv_cache_append(k_cache, v_cache, from_host(k, {2, heads, dim}, d),
                             from_host(v, {2, heads, dim}, d),
                             from_host(std::vector<int32_t>{0}, d));
  });
  EXPECT_EQ(k_cache.to_vector(), want_k);
}

TEST(LayoutArguments, AKvCacheAppendNeedsTheOnlyHandleAndMatchingShapes) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  auto cache = from_host(std::vector<float>(4 * 2 * 4, 0.0f), {1, 4, 2, 4}, d);
  const auto fresh = from_host(std::vector<float>(2 * 2 * 4, 1.0f), {2, 2, 4}, d);
  const auto start = from_host(std::vector<int32_t>{1}, d);
  const std::string shape = error_of<UsageError>([&] {
    kernels::kv_cache_append(cache, from_host(std::vector<float>(2 * 3 * 4, 1.0f), {2, 3, 4}, d),
                             start);
  });
  EXPECT_NE(shape.find("kv_cache_append: 'fresh'"), std::string::npos) << shape;
  const Tensor<float, 4> reader = cache;  // a second handle: writing in place would race with it
  const std::string owned =
      error_of<OwnershipError>([&] { kernels::kv_cache_append(cache, fresh, start); });
  EXPECT_NE(owned.find("partition() needs the only handle"), std::string::npos) << owned;
}

TEST(LayoutArguments, ACacheWritePastTheLastPositionIsRefusedAndOneThatFitsRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto cache = from_host(std::vector<float>(4 * 2 * 4, 0.0f), {1, 4, 2, 4}, d);
  const auto fresh = from_host(std::vector<float>(2 * 2 * 4, 1.0f), {2, 2, 4}, d);
  const std::string message =
      error_of<UsageError>([&] { (void)kernels::kv_cache_write(cache, fresh, 3); });
  EXPECT_NE(message.find("kv_cache_write: positions [3, 5) do not fit a cache of 4 positions"),
            std::string::npos)
      << message;
  EXPECT_EQ(kernels::kv_cache_write(cache, fresh, 2).shape(), (Shape{1, 4, 2, 4}));
}

}  // namespace
}  // namespace tessera::test

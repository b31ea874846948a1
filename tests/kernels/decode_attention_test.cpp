// Decode attention over a KV cache against a double-precision reference: sequences of different
// lengths in one batch (one position, a chunk boundary, the whole cache), grouped-query heads,
// head dimensions 64 and 128.
#include <tessera/kernels/attention.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"
#include "runtime/scoped_env.hpp"

namespace tessera::test {
namespace {

// q [B, Hq, D] against the first lengths[b] positions of caches [B, S, Hkv, D], in double.
std::vector<double> reference_decode(const std::vector<double>& q, const std::vector<double>& k,
                                     const std::vector<double>& v,
                                     const std::vector<int32_t>& lengths, int64_t q_heads,
                                     int64_t kv_heads, int64_t positions, int64_t dim) {
  std::vector<double> out(q.size(), 0.0);
  const double scale = 1 / std::sqrt(static_cast<double>(dim));
  for (size_t b = 0; b < lengths.size(); ++b)
    for (int64_t h = 0; h < q_heads; ++h) {
      const int64_t hk = h / (q_heads / kv_heads);
      const double* qh = &q[(b * q_heads + h) * dim];
      std::vector<double> p(static_cast<size_t>(lengths[b]));
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < lengths[b]; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < dim; ++d)
          dot += qh[d] * k[((b * positions + j) * kv_heads + hk) * dim + d];
        m = std::max(m, p[j] = dot * scale);
      }
      for (double& e : p) sum += (e = std::exp(e - m));
      for (int64_t j = 0; j < lengths[b]; ++j)
        for (int64_t d = 0; d < dim; ++d)
          out[(b * q_heads + h) * dim + d] +=
              p[j] / sum * v[((b * positions + j) * kv_heads + hk) * dim + d];
    }
  return out;
}

template <class T>
class DecodeAttentionTest : public ::testing::Test {};
using Dtypes = ::testing::Types<half, bfloat16, float>;
TYPED_TEST_SUITE(DecodeAttentionTest, Dtypes);

template <class T>
void check_decode(int64_t q_heads, int64_t kv_heads, int64_t dim, uint64_t salt,
                  int64_t positions = 600, std::vector<int32_t> lengths = {1, 257, 600}) {
  const Device d = test_device();
  const int64_t batch = static_cast<int64_t>(lengths.size());
  const auto q = random_values<T>(batch * q_heads * dim, -1, 1, salt);
  const auto k = random_values<T>(batch * positions * kv_heads * dim, -1, 1, salt + 1);
  const auto v = random_values<T>(batch * positions * kv_heads * dim, -1, 1, salt + 2);
  const auto qt = from_host(q, {batch, q_heads, dim}, d);
  const auto kt = from_host(k, {batch, positions, kv_heads, dim}, d);
  const auto vt = from_host(v, {batch, positions, kv_heads, dim}, d);
  const auto lt = from_host(lengths, d);
  const Tensor<T, 3> o = kernels::decode_attention(qt, kt, vt, lt);
  ASSERT_EQ(o.shape(), (Shape{batch, q_heads, dim}));
  const std::vector<double> want =
      reference_decode(widen(q), widen(k), widen(v), lengths, q_heads, kv_heads, positions, dim);
  expect_near(widen(o.to_vector()), want, 2 * unit_roundoff<T>(), 1e-5, "decode_attention");
  // The merged form is the same values, heads side by side along one axis.
  const Tensor<T, 2> merged = kernels::decode_attention_merged(qt, kt, vt, lt);
  ASSERT_EQ(merged.shape(), (Shape{batch, q_heads * dim}));
  expect_near(widen(merged.to_vector()), want, 2 * unit_roundoff<T>(), 1e-5,
              "decode_attention_merged");
  // q as [B, 1, Hq, D] (what qkv_norm_rope_append writes): the same kernels' work, the same bits.
  const Tensor<T, 2> merged4 =
      kernels::decode_attention_merged(from_host(q, {batch, 1, q_heads, dim}, d), kt, vt, lt);
  ASSERT_EQ(merged4.shape(), (Shape{batch, q_heads * dim}));
  EXPECT_EQ(widen(merged4.to_vector()), widen(merged.to_vector()));
}

TYPED_TEST(DecodeAttentionTest, GroupedQueryHeadDim64OverSequencesOfDifferentLengths) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_decode<TypeParam>(4, 2, 64, 1);
}

TYPED_TEST(DecodeAttentionTest, MultiHeadHeadDim128OverSequencesOfDifferentLengths) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_decode<TypeParam>(2, 2, 128, 4);
}

// 600 positions above are 19 chunks of 32, combined in one step without the lengths; a cache of
// more than 32 chunks is combined in steps of 32 over the chunks that hold a visible position: a
// sequence of 1 chunk, one of exactly 32, one of 33 (ragged) and one of the whole cache.
TYPED_TEST(DecodeAttentionTest, ACacheOfMoreChunksThanOneCombineStepIsCombinedInSteps) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_decode<TypeParam>(4, 2, 64, 7, 1100, {5, 1024, 1030, 1100});
}

// A pool of pages [P, page, Hkv, D] and each sequence's pages in a shuffled order; the reference
// reads the same positions gathered into a contiguous cache.
template <class T>
void check_paged() {
  const Device d = test_device();
  const int64_t q_heads = 4, kv_heads = 2, dim = 64, page = 32, pool = 16, per_seq = 10;
  const std::vector<int32_t> lengths{1, 100, 300};  // 300 positions: two chunks of 256
  const std::vector<int32_t> table{3,  0, 0,  0,  0, 0, 0,  0,  0, 0,  //
                                   9,  2, 14, 5,  0, 0, 0,  0,  0, 0,  //
                                   15, 1, 4,  11, 6, 8, 13, 10, 7, 12};
  const int64_t batch = static_cast<int64_t>(lengths.size()), row = kv_heads * dim;
  const auto q = random_values<T>(batch * q_heads * dim, -1, 1, 30);
  const auto kp = random_values<T>(pool * page * row, -1, 1, 31);
  const auto vp = random_values<T>(pool * page * row, -1, 1, 32);
  const int64_t positions = per_seq * page;
  std::vector<T> kc(static_cast<size_t>(batch * positions * row)), vc(kc.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t e = 0; e < row; ++e) {
        const int64_t src = (table[b * per_seq + p / page] * page + p % page) * row + e;
        kc[(b * positions + p) * row + e] = kp[src];
        vc[(b * positions + p) * row + e] = vp[src];
      }
  const Tensor<T, 3> o = kernels::paged_decode_attention(
      from_host(q, {batch, q_heads, dim}, d), from_host(kp, {pool, page, kv_heads, dim}, d),
      from_host(vp, {pool, page, kv_heads, dim}, d), from_host(table, {batch, per_seq}, d),
      from_host(lengths, d));
  expect_near(
      widen(o.to_vector()),
      reference_decode(widen(q), widen(kc), widen(vc), lengths, q_heads, kv_heads, positions, dim),
      2 * unit_roundoff<T>(), 1e-5, "paged_decode_attention");
}

TYPED_TEST(DecodeAttentionTest, PagedCacheGivesWhatTheSameContiguousCacheGives) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_paged<TypeParam>();
}

// TESSERA_AB_COMBINE_SPLIT=4 (an A/B switch): the combine's blocks each take a quarter of a head's
// columns (16 of D = 64, 32 of 128), in one step and in steps, both output forms and the paged
// cache's; the same results against the reference. (The results cannot tell whether the split
// ran: TESSERA_DUMP=ir shows [1, 1, 16] and [1, 16] output tiles here.)
TYPED_TEST(DecodeAttentionTest, TheCombineSplitOverColumnsGivesTheReferencesResults) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const ScopedEnv split("TESSERA_AB_COMBINE_SPLIT", "4");
  check_decode<TypeParam>(4, 2, 64, 11);
  check_decode<TypeParam>(2, 2, 128, 12, 1100, {5, 1024, 1030, 1100});
  check_paged<TypeParam>();
}

TEST(DecodeAttentionArguments, APageIdOutsideThePoolIsABoundsErrorAndOneInsideRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto q = from_host(random_values<float>(16, -1, 1, 33), {1, 1, 16}, d);
  const auto pages = from_host(random_values<float>(2 * 16 * 16, -1, 1, 34), {2, 16, 1, 16}, d);
  const auto lengths = from_host(std::vector<int32_t>{20}, d);
  const std::string message = error_of<BoundsError>([&] {
    (void)kernels::paged_decode_attention(
        q, pages, pages, from_host(std::vector<int32_t>{1, 2}, {1, 2}, d), lengths);
  });
  // The page's first load reports it (the value tile's: it is issued first).
  EXPECT_NE(message.find("'v_pages'"), std::string::npos) << message;
  EXPECT_EQ(kernels::paged_decode_attention(
                q, pages, pages, from_host(std::vector<int32_t>{1, 0}, {1, 2}, d), lengths)
                .shape(),
            (Shape{1, 1, 16}));
}

TEST(DecodeAttentionArguments, APageSizeWithoutAKernelIsRefusedAndASupportedOneRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto q = from_host(random_values<float>(16, -1, 1, 35), {1, 1, 16}, d);
  const auto table = from_host(std::vector<int32_t>{0}, {1, 1}, d);
  const auto lengths = from_host(std::vector<int32_t>{5}, d);
  const auto pages24 = from_host(random_values<float>(24 * 16, -1, 1, 36), {1, 24, 1, 16}, d);
  const std::string message = error_of<UsageError>(
      [&] { (void)kernels::paged_decode_attention(q, pages24, pages24, table, lengths); });
  EXPECT_NE(message.find("paged_decode_attention: pages of 24 positions (axis 1 of 'k_pages'); "
                         "the page size must be 16, 32, 64, 128 or 256"),
            std::string::npos)
      << message;
  const auto pages16 = pages24.slice(1, 0, 16);
  EXPECT_EQ(kernels::paged_decode_attention(q, pages16, pages16, table, lengths).shape(),
            (Shape{1, 1, 16}));
}

TEST(DecodeAttentionArguments, ALengthPastTheCacheIsRefusedAndOneInsideRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto q = from_host(random_values<float>(2 * 16, -1, 1, 7), {2, 1, 16}, d);
  const auto cache = from_host(random_values<float>(2 * 8 * 16, -1, 1, 8), {2, 8, 1, 16}, d);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::decode_attention(q, cache, cache, from_host(std::vector<int32_t>{8, 9}, d));
  });
  EXPECT_NE(message.find("decode_attention: lengths[1] is 9 but must be in [1, 8], the cache's "
                         "positions"),
            std::string::npos)
      << message;
  EXPECT_EQ(
      kernels::decode_attention(q, cache, cache, from_host(std::vector<int32_t>{8, 1}, d)).shape(),
      (Shape{2, 1, 16}));
}

// A 4-axis q is one token of each sequence: [B, 1, Hq, D]; two tokens are refused.
TEST(DecodeAttentionArguments, AFourAxisQueryOfTwoTokensIsRefusedAndOneOfOneRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto cache = from_host(random_values<float>(2 * 8 * 16, -1, 1, 9), {2, 8, 1, 16}, d);
  const auto lengths = from_host(std::vector<int32_t>{8, 3}, d);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::decode_attention_merged(
        from_host(random_values<float>(2 * 2 * 16, -1, 1, 10), {2, 2, 1, 16}, d), cache, cache,
        lengths);
  });
  EXPECT_NE(message.find("decode_attention_merged: 'q' is [2, 2, 1, 16]; a 4-axis q is [B, 1, "
                         "Hq, D]"),
            std::string::npos)
      << message;
  EXPECT_EQ(kernels::decode_attention_merged(
                from_host(random_values<float>(2 * 16, -1, 1, 11), {2, 1, 1, 16}, d), cache, cache,
                lengths)
                .shape(),
            (Shape{2, 16}));
}

}  // namespace
}  // namespace tessera::test

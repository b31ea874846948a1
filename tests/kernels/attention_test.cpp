// Prefill (flash) attention against a double-precision softmax(q k^T * scale) v: causal and not,
// grouped-query heads, head dimensions 64 and 128, lengths that are not multiples of the tiles
// (one tile and several), and a causal prefill that continues a cached prefix (fewer queries than
// keys). On an H200 the f16/bf16 cases run the sm_90a attention lowering (TMA + wgmma).
#include <tessera/kernels/attention.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

struct Shape4 {
  int64_t batch, q_len, k_len, q_heads, kv_heads, dim;
};

// q [B, Lq, Hq, D], k and v [B, Lk, Hkv, D] -> [B, Lq, Hq, D], all in double.
std::vector<double> reference_attention(const std::vector<double>& q, const std::vector<double>& k,
                                        const std::vector<double>& v, const Shape4& s, bool causal,
                                        double scale = 0) {
  std::vector<double> out(q.size(), 0.0);
  if (scale == 0) scale = 1 / std::sqrt(static_cast<double>(s.dim));
  const int64_t group = s.q_heads / s.kv_heads;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.q_heads; ++h)
      for (int64_t i = 0; i < s.q_len; ++i) {
        const double* qi = &q[((b * s.q_len + i) * s.q_heads + h) * s.dim];
        const int64_t visible = causal ? s.k_len - s.q_len + i + 1 : s.k_len;
        std::vector<double> p(static_cast<size_t>(visible));
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          const double* kj = &k[((b * s.k_len + j) * s.kv_heads + h / group) * s.dim];
          double dot = 0;
          for (int64_t d = 0; d < s.dim; ++d) dot += qi[d] * kj[d];
          p[j] = dot * scale;
          m = std::max(m, p[j]);
        }
        for (double& e : p) sum += (e = std::exp(e - m));
        double* oi = &out[((b * s.q_len + i) * s.q_heads + h) * s.dim];
        for (int64_t j = 0; j < visible; ++j) {
          const double* vj = &v[((b * s.k_len + j) * s.kv_heads + h / group) * s.dim];
          for (int64_t d = 0; d < s.dim; ++d) oi[d] += p[j] / sum * vj[d];
        }
      }
  return out;
}

template <class T>
class AttentionTest : public ::testing::Test {};
using Dtypes = ::testing::Types<half, bfloat16, float>;
TYPED_TEST_SUITE(AttentionTest, Dtypes);

template <class T>
void check_flash(const Shape4& s, bool causal, const std::string& what, uint64_t salt,
                 float scale = 0) {
  const Device d = test_device();
  const auto q = random_values<T>(s.batch * s.q_len * s.q_heads * s.dim, -1, 1, salt);
  const auto k = random_values<T>(s.batch * s.k_len * s.kv_heads * s.dim, -1, 1, salt + 1);
  const auto v = random_values<T>(s.batch * s.k_len * s.kv_heads * s.dim, -1, 1, salt + 2);
  kernels::AttentionOptions options;
  options.causal = causal;
  if (scale != 0) options.scale = scale;
  const Tensor<T, 4> o =
      kernels::flash_attention(from_host(q, {s.batch, s.q_len, s.q_heads, s.dim}, d),
                               from_host(k, {s.batch, s.k_len, s.kv_heads, s.dim}, d),
                               from_host(v, {s.batch, s.k_len, s.kv_heads, s.dim}, d), options);
  ASSERT_EQ(o.shape(), (Shape{s.batch, s.q_len, s.q_heads, s.dim}));
  // The output's rounding to T; the probabilities' rounding to T before they weigh v (|v| <= 1);
  // f32 scores and sums.
  expect_near(widen(o.to_vector()),
              reference_attention(widen(q), widen(k), widen(v), s, causal, scale),
              2 * unit_roundoff<T>(), 2 * unit_roundoff<T>() + 1e-5, what);
}

TYPED_TEST(AttentionTest, NonCausalMultiHeadWithHeadDim64AndRaggedLengths) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({2, 70, 70, 2, 2, 64}, false, "non-causal D64", 1);
}

TYPED_TEST(AttentionTest, CausalGroupedQueryWithHeadDim128) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({1, 100, 100, 4, 2, 128}, true, "causal GQA D128", 4);
}

TYPED_TEST(AttentionTest, CausalPrefillAfterACachedPrefixSeesThePrefix) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({1, 20, 90, 2, 1, 64}, true, "causal 20 queries after 70 cached", 7);
}

// Several query and key tiles (the GPU's tiles are 128 x 128 for f16/bf16), with ragged last ones.
TYPED_TEST(AttentionTest, ManyKeyTilesCausalGroupedQueryWithHeadDim128) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({2, 300, 300, 4, 2, 128}, true, "causal GQA D128 L300", 11);
}

TYPED_TEST(AttentionTest, ManyKeyTilesNonCausalWithMoreKeysThanQueriesAndHeadDim64) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({1, 200, 333, 4, 4, 64}, false, "non-causal D64 200x333", 14);
}

TYPED_TEST(AttentionTest, ManyKeyTilesCausalAfterACachedPrefixWithHeadDim64) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({1, 150, 420, 2, 1, 64}, true, "causal 150 queries after 270 cached", 17);
}

// More tiles than an H200 or H100 has multiprocessors (2 x 2 x 40 = 160 > 132): blocks of the
// persistent grid run a second tile, whose Q the producer copies while the first tile's last
// softmax, P V and store still run.
TYPED_TEST(AttentionTest, ManyKeyTilesInMoreQueryTilesThanMultiprocessors) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({2, 200, 200, 40, 10, 64}, true, "causal GQA D64 160 tiles", 23);
}

// A positive scale is applied inside exp's argument (max(s) * scale is max(s * scale)); any
// other takes the kernel that scales every score before the max.
TYPED_TEST(AttentionTest, ManyKeyTilesCausalWithANegativeScale) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_flash<TypeParam>({1, 260, 260, 2, 2, 128}, true, "causal D128 scale -0.25", 29, -0.25f);
}

TYPED_TEST(AttentionTest, RankThreeTensorsAreABatchOfOne) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const Shape4 s{1, 33, 33, 4, 1, 64};
  const Device d = test_device();
  const auto q = random_values<T>(s.q_len * s.q_heads * s.dim, -1, 1, 20);
  const auto k = random_values<T>(s.k_len * s.kv_heads * s.dim, -1, 1, 21);
  const auto v = random_values<T>(s.k_len * s.kv_heads * s.dim, -1, 1, 22);
  const Tensor<T, 3> o = kernels::flash_attention(
      from_host(q, {s.q_len, s.q_heads, s.dim}, d), from_host(k, {s.k_len, s.kv_heads, s.dim}, d),
      from_host(v, {s.k_len, s.kv_heads, s.dim}, d), {.causal = true});
  expect_near(widen(o.to_vector()), reference_attention(widen(q), widen(k), widen(v), s, true),
              2 * unit_roundoff<T>(), 2 * unit_roundoff<T>() + 1e-5, "rank 3 causal");
}

TEST(AttentionOptions, AGivenScaleReplacesOneOverTheSquareRootOfTheHeadDim) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Shape4 s{1, 9, 70, 2, 2, 64};  // fewer queries than keys, not causal
  const Device d = test_device();
  const auto q = random_values<float>(s.q_len * s.q_heads * s.dim, -1, 1, 23);
  const auto k = random_values<float>(s.k_len * s.kv_heads * s.dim, -1, 1, 24);
  const auto v = random_values<float>(s.k_len * s.kv_heads * s.dim, -1, 1, 25);
  const Tensor<float, 3> o = kernels::flash_attention(
      from_host(q, {s.q_len, s.q_heads, s.dim}, d), from_host(k, {s.k_len, s.kv_heads, s.dim}, d),
      from_host(v, {s.k_len, s.kv_heads, s.dim}, d), {.scale = 0.5f});
  expect_near(widen(o.to_vector()),
              reference_attention(widen(q), widen(k), widen(v), s, false, 0.5), 1e-6, 1e-5,
              "scale 0.5");
}

TEST(AttentionArguments, QueryHeadsNotAMultipleOfKvHeadsAreRefusedAndAMultipleRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto q = from_host(random_values<float>(1 * 4 * 3 * 16, -1, 1, 10), {1, 4, 3, 16}, d);
  const auto kv = from_host(random_values<float>(1 * 4 * 2 * 16, -1, 1, 11), {1, 4, 2, 16}, d);
  const std::string message =
      error_of<UsageError>([&] { (void)kernels::flash_attention(q, kv, kv); });
  EXPECT_NE(message.find("flash_attention: 'q' has 3 heads and 'k' has 2; grouped-query attention "
                         "needs the query heads to be a multiple of the key/value heads"),
            std::string::npos)
      << message;
  const auto q4 = from_host(random_values<float>(1 * 4 * 4 * 16, -1, 1, 12), {1, 4, 4, 16}, d);
  EXPECT_EQ(kernels::flash_attention(q4, kv, kv).shape(), (Shape{1, 4, 4, 16}));
}

TEST(AttentionArguments, CausalWithMoreQueriesThanKeysIsRefusedAndWithAsManyRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto q = from_host(random_values<float>(5 * 16, -1, 1, 13), {1, 5, 1, 16}, d);
  const auto kv = from_host(random_values<float>(4 * 16, -1, 1, 14), {1, 4, 1, 16}, d);
  const std::string message =
      error_of<UsageError>([&] { (void)kernels::flash_attention(q, kv, kv, {.causal = true}); });
  EXPECT_NE(message.find("flash_attention: causal attention of 5 queries against 4 keys"),
            std::string::npos)
      << message;
  EXPECT_EQ(kernels::flash_attention(q.slice(1, 0, 4), kv, kv, {.causal = true}).shape(),
            (Shape{1, 4, 1, 16}));
}

}  // namespace
}  // namespace tessera::test

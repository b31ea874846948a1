// Decode attention over a KV cache against a double-precision reference: sequences of different
// lengths in one batch (one position, a chunk boundary, the whole cache), grouped-query heads,
// head dimensions 64 and 128.
#include <tessera/kernels/attention.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

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
void check_decode(int64_t q_heads, int64_t kv_heads, int64_t dim, uint64_t salt) {
  const Device d = test_device();
  const int64_t positions = 600;  // three chunks of 256, the last one ragged
  const std::vector<int32_t> lengths{1, 257, 600};
  const int64_t batch = static_cast<int64_t>(lengths.size());
  const auto q = random_values<T>(batch * q_heads * dim, -1, 1, salt);
  const auto k = random_values<T>(batch * positions * kv_heads * dim, -1, 1, salt + 1);
  const auto v = random_values<T>(batch * positions * kv_heads * dim, -1, 1, salt + 2);
  const Tensor<T, 3> o = kernels::decode_attention(
      from_host(q, {batch, q_heads, dim}, d), from_host(k, {batch, positions, kv_heads, dim}, d),
      from_host(v, {batch, positions, kv_heads, dim}, d), from_host(lengths, d));
  ASSERT_EQ(o.shape(), (Shape{batch, q_heads, dim}));
  expect_near(
      widen(o.to_vector()),
      reference_decode(widen(q), widen(k), widen(v), lengths, q_heads, kv_heads, positions, dim),
      2 * unit_roundoff<T>(), 1e-5, "decode_attention");
}

TYPED_TEST(DecodeAttentionTest, GroupedQueryHeadDim64OverSequencesOfDifferentLengths) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_decode<TypeParam>(4, 2, 64, 1);
}

TYPED_TEST(DecodeAttentionTest, MultiHeadHeadDim128OverSequencesOfDifferentLengths) {
  TESSERA_REQUIRE_TEST_DEVICE();
  check_decode<TypeParam>(2, 2, 128, 4);
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

}  // namespace
}  // namespace tessera::test

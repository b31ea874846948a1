// RoPE, half-split and interleaved, on queries and keys with different head counts, against a
// double-precision reference.
#include <tessera/kernels/rope.hpp>

#include <tessera/kernels/layout.hpp>
#include <tessera/kernels/norm.hpp>

#include "kernels/reference.hpp"
#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using kernels::RopeStyle;

constexpr double kBase = 10000;

// x [tokens, heads, dim] rotated in double, angles from double (the tables' f32 rounding is in the
// bound).
std::vector<double> reference_rope(const std::vector<double>& x, const std::vector<int32_t>& pos,
                                   int64_t heads, int64_t dim, RopeStyle style) {
  std::vector<double> out(x.size());
  const int64_t half = dim / 2;
  for (size_t t = 0; t < pos.size(); ++t)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < half; ++i) {
        const double angle = pos[t] * std::pow(kBase, -2.0 * static_cast<double>(i) / dim);
        const int64_t base = (static_cast<int64_t>(t) * heads + h) * dim;
        const int64_t ia = base + (style == RopeStyle::half_split ? i : 2 * i);
        const int64_t ib = base + (style == RopeStyle::half_split ? i + half : 2 * i + 1);
        out[ia] = x[ia] * std::cos(angle) - x[ib] * std::sin(angle);
        out[ib] = x[ib] * std::cos(angle) + x[ia] * std::sin(angle);
      }
  return out;
}

template <class T>
class RopeTest : public ::testing::Test {};
using Dtypes = ::testing::Types<float, half, bfloat16>;
TYPED_TEST_SUITE(RopeTest, Dtypes);

TYPED_TEST(RopeTest, BothStylesRotateQueriesAndKeysByTheirPositions) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  const int64_t tokens = 5, q_heads = 4, k_heads = 2, dim = 16;
  const std::vector<int32_t> pos{0, 1, 2, 37, 99};
  const auto q = random_values<T>(tokens * q_heads * dim, -2, 2, 1);
  const auto k = random_values<T>(tokens * k_heads * dim, -2, 2, 2);
  const Device d = test_device();
  const kernels::RopeTables tables = kernels::rope_tables(100, dim, kBase, d);
  // One rounding to T; f32 products, and the tables' f32 cos and sin.
  const double rel = 2 * unit_roundoff<T>(), abs = 1e-6;
  for (const RopeStyle style : {RopeStyle::half_split, RopeStyle::interleaved}) {
    const char* name = style == RopeStyle::half_split ? "half-split" : "interleaved";
    const auto qk =
        kernels::rope_qk(from_host(q, {tokens, q_heads, dim}, d),
                         from_host(k, {tokens, k_heads, dim}, d), from_host(pos, d), tables, style);
    expect_near(widen(qk.q.to_vector()), reference_rope(widen(q), pos, q_heads, dim, style), rel,
                abs, std::string("rope_qk q ") + name);
    expect_near(widen(qk.k.to_vector()), reference_rope(widen(k), pos, k_heads, dim, style), rel,
                abs, std::string("rope_qk k ") + name);
    const Tensor<T, 3> y =
        kernels::rope(from_host(q, {tokens, q_heads, dim}, d), from_host(pos, d), tables, style);
    expect_near(widen(y.to_vector()), reference_rope(widen(q), pos, q_heads, dim, style), rel, abs,
                std::string("rope ") + name);
  }
}

// The fused decode-step kernel gives what the separate kernels give: split, QK-norm (rounded to
// T), RoPE; v only split. Grouped-query heads (6 query, 2 key/value), both styles.
// Small heads over three tokens, and a decode step at Qwen3-0.6B's shapes (16 and 8 heads of 128).
template <class T>
void expect_qkv_norm_rope_as_separate_launches(int64_t tokens, int64_t hq, int64_t hkv, int64_t dim,
                                               uint64_t salt) {
  const Device d = test_device();
  const float eps = 1e-6f;
  const auto qkv = from_host(random_values<T>(tokens * (hq + 2 * hkv) * dim, -2, 2, salt),
                             {tokens, (hq + 2 * hkv) * dim}, d);
  const auto qw = from_host(random_values<T>(dim, 0.5, 1.5, salt + 1), d);
  const auto kw = from_host(random_values<T>(dim, 0.5, 1.5, salt + 2), d);
  std::vector<int32_t> positions;
  for (int64_t t = 0; t < tokens; ++t) positions.push_back(static_cast<int32_t>(7 * t + 3));
  const auto pos = from_host(positions, d);
  const kernels::RopeTables tables = kernels::rope_tables(64, dim, kBase, d);
  for (RopeStyle style : {RopeStyle::half_split, RopeStyle::interleaved}) {
    const kernels::SplitQKV<T> got =
        kernels::qkv_norm_rope(qkv, hq, hkv, qw, kw, eps, pos, tables, style);
    const kernels::RotatedQK<T> want = kernels::rope_qk(
        kernels::rms_norm(kernels::split_heads(qkv, dim, 0, hq), qw, eps),
        kernels::rms_norm(kernels::split_heads(qkv, dim, hq, hkv), kw, eps), pos, tables, style);
    ASSERT_EQ(got.q.shape(), (Shape{tokens, hq, dim}));
    ASSERT_EQ(got.k.shape(), (Shape{tokens, hkv, dim}));
    expect_near(widen(got.q.to_vector()), widen(want.q.to_vector()), 2 * unit_roundoff<T>(), 1e-6,
                "q");
    expect_near(widen(got.k.to_vector()), widen(want.k.to_vector()), 2 * unit_roundoff<T>(), 1e-6,
                "k");
    EXPECT_EQ(widen(got.v.to_vector()),
              widen(kernels::split_heads(qkv, dim, hq + hkv, hkv).to_vector()));
  }
}

// The fused decode-step kernel gives what the separate kernels give: split, QK-norm (rounded to
// T), RoPE; v only split. Grouped-query heads, both styles.
TYPED_TEST(RopeTest, QkvNormRopeEqualsSplitNormAndRopeInSeparateLaunches) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  expect_qkv_norm_rope_as_separate_launches<T>(3, 6, 2, 16, 21);
  expect_qkv_norm_rope_as_separate_launches<T>(1, 16, 8, 128, 31);
  const Device d = test_device();
  const auto qkv = from_host(std::vector<T>(3 * 160, T(1.0f)), {3, 160}, d);
  const auto w = from_host(std::vector<T>(16, T(1.0f)), d);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::qkv_norm_rope(qkv, 6, 3, w, w, 1e-6f,
                                 from_host(std::vector<int32_t>{0, 1, 2}, d),
                                 kernels::rope_tables(8, 16, kBase, d), RopeStyle::half_split);
  });
  EXPECT_NE(message.find("qkv_norm_rope: 'qkv' is [3, 160] but 6 query and 3 key/value heads"),
            std::string::npos)
      << message;
}

// Heads [first, first + count) of each token's stacked row x [tokens, stride], each RMS-normalized
// with w in double and rounded to T (qkv_norm_rope rounds the norm's result once, as rms_norm
// does), widened: [tokens, count, dim].
template <class T>
std::vector<double> reference_head_norm(const std::vector<double>& x, int64_t tokens,
                                        int64_t stride, int64_t first, int64_t count, int64_t dim,
                                        const std::vector<double>& w, double eps) {
  std::vector<double> out;
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t h = first; h < first + count; ++h) {
      const double* row = x.data() + t * stride + h * dim;
      double squares = 0;
      for (int64_t i = 0; i < dim; ++i) squares += row[i] * row[i];
      const double inv = 1.0 / std::sqrt(squares / static_cast<double>(dim) + eps);
      for (int64_t i = 0; i < dim; ++i)
        out.push_back(
            static_cast<double>(static_cast<float>(T(static_cast<float>(row[i] * inv * w[i])))));
    }
  return out;
}

// A decode step with the cache append folded in, for a batch of `positions.size()` sequences:
// q [B, 1, Hq, D] and the appended rows against the double reference (QK-norm rounded to T, then
// RoPE at each sequence's position) and bit for bit against the launches it replaces
// (qkv_norm_rope, then kv_cache_append); every other cache position keeps its value, and a
// position past the cache's end stores nothing.
template <class T>
void expect_qkv_norm_rope_append(const std::vector<int32_t>& positions, int64_t cache_positions,
                                 int64_t hq, int64_t hkv, int64_t dim, RopeStyle style,
                                 uint64_t salt) {
  const Device d = test_device();
  const auto batch = static_cast<int64_t>(positions.size());
  const int64_t stride = (hq + 2 * hkv) * dim, row = hkv * dim;
  const float eps = 1e-6f;
  const auto x = random_values<T>(batch * stride, -2, 2, salt);
  const auto qw = random_values<T>(dim, 0.5, 1.5, salt + 1);
  const auto kw = random_values<T>(dim, 0.5, 1.5, salt + 2);
  const auto k_old = random_values<T>(batch * cache_positions * row, -1, 1, salt + 3);
  const auto v_old = random_values<T>(batch * cache_positions * row, -1, 1, salt + 4);
  const auto qkv = from_host(x, {batch, stride}, d);
  const auto q_norm = from_host(qw, d), k_norm = from_host(kw, d);
  const auto pos = from_host(positions, d);
  // One position past the cache's end inside the tables: the RoPE angle exists, the row is dropped.
  const kernels::RopeTables tables = kernels::rope_tables(cache_positions + 1, dim, kBase, d);
  const int64_t cache_shape[] = {batch, cache_positions, hkv, dim};
  auto k_cache = from_host(k_old, cache_shape, d), v_cache = from_host(v_old, cache_shape, d);
  const Tensor<T, 4> q = kernels::qkv_norm_rope_append(qkv, hq, hkv, q_norm, k_norm, eps, pos,
                                                       tables, style, k_cache, v_cache);
  ASSERT_EQ(q.shape(), (Shape{batch, 1, hq, dim}));
  ASSERT_EQ(k_cache.shape(), (Shape{batch, cache_positions, hkv, dim}));

  // The double reference.
  const std::vector<double> xd = widen(x);
  const std::vector<double> want_q =
      reference_rope(reference_head_norm<T>(xd, batch, stride, 0, hq, dim, widen(qw), eps),
                     positions, hq, dim, style);
  const std::vector<double> want_k =
      reference_rope(reference_head_norm<T>(xd, batch, stride, hq, hkv, dim, widen(kw), eps),
                     positions, hkv, dim, style);
  // One rounding of the norm to T (an f32 sum may round it the other way than double does), the
  // rotation's f32 products, one rounding to T: a few units of T's roundoff on values below ~5.
  const double rel = 4 * unit_roundoff<T>(), abs = 16 * unit_roundoff<T>();
  expect_near(widen(q.to_vector()), want_q, rel, abs, "qkv_norm_rope_append q");
  std::vector<double> want_kc = widen(k_old), want_vc = widen(v_old);
  for (int64_t b = 0; b < batch; ++b) {
    if (positions[b] >= cache_positions) continue;
    const int64_t at = (b * cache_positions + positions[b]) * row;
    for (int64_t e = 0; e < row; ++e) {
      want_kc[at + e] = want_k[b * row + e];
      want_vc[at + e] = xd[b * stride + (hq + hkv) * dim + e];
    }
  }
  expect_near(widen(k_cache.to_vector()), want_kc, rel, abs, "qkv_norm_rope_append k_cache");
  EXPECT_EQ(widen(v_cache.to_vector()), want_vc) << "qkv_norm_rope_append v_cache";

  // The launches it replaces give the same bits.
  const kernels::SplitQKV<T> split =
      kernels::qkv_norm_rope(qkv, hq, hkv, q_norm, k_norm, eps, pos, tables, style);
  auto k_two = from_host(k_old, cache_shape, d), v_two = from_host(v_old, cache_shape, d);
  // As [B, 1, Hkv, D]: one fresh position of each sequence.
  kernels::kv_cache_append(k_two, v_two, from_host(split.k.to_vector(), {batch, 1, hkv, dim}, d),
                           from_host(split.v.to_vector(), {batch, 1, hkv, dim}, d), pos);
  EXPECT_EQ(widen(q.to_vector()), widen(split.q.to_vector()));
  EXPECT_EQ(widen(k_cache.to_vector()), widen(k_two.to_vector()));
  EXPECT_EQ(widen(v_cache.to_vector()), widen(v_two.to_vector()));
}

// Batch 1 at Qwen3-0.6B's heads (16 query, 8 key/value heads of 128) at the cache's first and last
// positions; a batch of 6 (6 query and 2 key/value heads of 16) at the edges of decode
// attention's 32-position chunks and the append's 64-position ones, and one past the end.
TYPED_TEST(RopeTest, QkvNormRopeAppendStoresEachSequencesKeysAndValuesAtItsPosition) {
  using T = TypeParam;
  TESSERA_REQUIRE_TEST_DEVICE();
  for (RopeStyle style : {RopeStyle::half_split, RopeStyle::interleaved}) {
    SCOPED_TRACE(style == RopeStyle::half_split ? "half-split" : "interleaved");
    expect_qkv_norm_rope_append<T>({0}, 40, 16, 8, 128, style, 41);
    expect_qkv_norm_rope_append<T>({39}, 40, 16, 8, 128, style, 43);
    expect_qkv_norm_rope_append<T>({31, 0, 32, 63, 64, 70}, 70, 6, 2, 16, style, 47);
  }
}

TEST(RopeArguments, QkvNormRopeAppendRefusesACacheOfAnotherBatchAndLeavesItsCaches) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const int64_t hq = 4, hkv = 2, dim = 8;
  const auto qkv = from_host(random_values<float>(2 * (hq + 2 * hkv) * dim, -1, 1, 5),
                             {2, (hq + 2 * hkv) * dim}, d);
  const auto w = from_host(std::vector<float>(dim, 1.0f), d);
  const auto pos = from_host(std::vector<int32_t>{3, 5}, d);
  const auto tables = kernels::rope_tables(16, dim, kBase, d);
  auto k_cache = zeros<float>({3, 16, hkv, dim}, d), v_cache = zeros<float>({3, 16, hkv, dim}, d);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::qkv_norm_rope_append(qkv, hq, hkv, w, w, 1e-6f, pos, tables,
                                        RopeStyle::half_split, k_cache, v_cache);
  });
  EXPECT_NE(message.find("qkv_norm_rope_append: 'k_cache' is [3, 16, 2, 8] but 'qkv' [2, 64] is "
                         "a step of 2 sequences"),
            std::string::npos)
      << message;
  // A v_cache with a second handle is refused, and k_cache stays usable.
  k_cache = zeros<float>({2, 16, hkv, dim}, d);
  v_cache = zeros<float>({2, 16, hkv, dim}, d);
  const Tensor<float, 4> reader = v_cache;
  (void)error_of<OwnershipError>([&] {
    (void)kernels::qkv_norm_rope_append(qkv, hq, hkv, w, w, 1e-6f, pos, tables,
                                        RopeStyle::half_split, k_cache, v_cache);
  });
  EXPECT_EQ(k_cache.shape(), (Shape{2, 16, hkv, dim}));
  EXPECT_EQ(k_cache.to_vector(), std::vector<float>(2 * 16 * hkv * dim, 0.0f));
}

TEST(RopeArguments, TablesForAnotherHeadDimensionAreRefusedAndTheRightOnesRun) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto x = from_host(random_values<float>(2 * 3 * 8, -1, 1, 3), {2, 3, 8}, d);
  const auto pos = from_host(std::vector<int32_t>{0, 1}, d);
  const std::string message = error_of<UsageError>([&] {
    (void)kernels::rope(x, pos, kernels::rope_tables(4, 16, kBase, d), RopeStyle::half_split);
  });
  EXPECT_NE(message.find("rope: the tables are for head dimension 16 but 'x' has head dimension 8"),
            std::string::npos)
      << message;
  EXPECT_EQ(
      kernels::rope(x, pos, kernels::rope_tables(4, 8, kBase, d), RopeStyle::half_split).shape(),
      (Shape{2, 3, 8}));
}

TEST(RopeArguments, APositionPastTheTablesIsABoundsErrorAndOneInsideRuns) {
  TESSERA_REQUIRE_TEST_DEVICE();
  const Device d = test_device();
  const auto x = from_host(random_values<float>(2 * 1 * 4, -1, 1, 4), {2, 1, 4}, d);
  const auto tables = kernels::rope_tables(8, 4, kBase, d);
  const std::string message = error_of<BoundsError>([&] {
    (void)kernels::rope(x, from_host(std::vector<int32_t>{3, 8}, d), tables,
                        RopeStyle::interleaved);
  });
  EXPECT_NE(message.find("'cos_table'"), std::string::npos) << message;
  EXPECT_EQ(
      kernels::rope(x, from_host(std::vector<int32_t>{3, 7}, d), tables, RopeStyle::interleaved)
          .shape(),
      (Shape{2, 1, 4}));
}

}  // namespace
}  // namespace tessera::test

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

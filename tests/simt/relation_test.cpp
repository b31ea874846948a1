// Size relations: parameter names as written, the text a failure shows, and checked arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "tessera/simt/kernel.hpp"

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(rel_kernel, const Index1D& i, DisjointSpan<float> out, Span2D<const float> m,
                    int64_t n, Span<const float> x) {
  return contract<1>();
};

namespace tessera::simt::detail {
namespace {

struct V : ContractVocabulary {};

TEST(Relation, ParameterNamesAreTheLastIdentifierOfEachDeclaration) {
  constexpr std::string_view params =
      "const TileIndex2D<64, 64, 4, 4>& t, DisjointSpan2D<float> c, Span<const float> x,"
      " int64_t n";
  EXPECT_EQ(param_name(params, 0), "t");
  EXPECT_EQ(param_name(params, 1), "c");
  EXPECT_EQ(param_name(params, 3), "n");
  EXPECT_EQ(param_name(params, 4), "");
  static_assert(param_position(params, "x") == 2);
  static_assert(param_position(params, "y") == -1);
  static_assert(param_position(rel_kernel::kParams, "m") == 2);
}

template <class R>
std::string text(const R& r) {
  std::string t, lhs, rhs;
  r.render(t, lhs, rhs);
  return t;
}

TEST(Relation, RendersAsWrittenWithParenthesesWhereNeeded) {
  EXPECT_EQ(text(V::size<"x"> * 2 + V::value<"n"> >= V::rows<"m">), "x.size() * 2 + n >= m.rows()");
  EXPECT_EQ(text((V::size<"x"> + 1) * V::cols<"m"> == V::size<"out">),
            "(x.size() + 1) * m.cols() == out.size()");
  EXPECT_EQ(text(V::threads<0> >= V::size<"out">), "threads<0> >= out.size()");
  EXPECT_EQ(text(V::size<"out"> != 0), "out.size() != 0");
}

struct Facts {
  ArgFacts args[5];
  RelationContext context() {
    RelationContext c;
    c.args = args;
    return c;
  }
};

Facts facts(index_t out, index_t rows, index_t cols, index_t n, index_t x) {
  Facts f;
  f.args[1].size = out;
  f.args[2].rows = rows;
  f.args[2].cols = cols;
  f.args[3].value = n;
  f.args[4].size = x;
  return f;
}

TEST(Relation, EvaluatesEachFactOfTheNamedArgument) {
  Facts f = facts(12, 3, 4, 12, 7);
  RelationContext c = f.context();
  const auto holds = V::size<"out"> == V::rows<"m"> * V::cols<"m">;
  EXPECT_TRUE(holds.evaluate<rel_kernel>(c).holds);
  const auto breaks = V::size<"x"> >= V::value<"n">;
  const RelationOutcome o = breaks.evaluate<rel_kernel>(c);
  EXPECT_FALSE(o.holds);
  EXPECT_EQ(o.lhs, 7);
  EXPECT_EQ(o.rhs, 12);
}

TEST(Relation, OverflowFailsTheRelationAndNamesTheOperation) {
  const index_t big = index_t{3037000500};  // big * big > 2^63
  Facts f = facts(1, big, big, 0, 1);
  RelationContext c = f.context();
  const auto r = V::rows<"m"> * V::cols<"m"> >= V::size<"out">;
  EXPECT_FALSE(r.evaluate<rel_kernel>(c).holds);
  ASSERT_TRUE(c.overflow.happened);
  EXPECT_EQ(c.overflow.expression, "m.rows() * m.cols()");
  EXPECT_EQ(c.overflow.a, big);
  EXPECT_EQ(c.overflow.b, big);

  Facts g = facts(1, 1, 1, std::numeric_limits<index_t>::max(), 1);
  RelationContext d = g.context();
  EXPECT_FALSE((V::value<"n"> + 1 > 0).evaluate<rel_kernel>(d).holds);
  EXPECT_EQ(d.overflow.op, '+');
}

}  // namespace
}  // namespace tessera::simt::detail

// Shape helpers: element counts, printing, tile counts and row-major strides.
#include <gtest/gtest.h>

#include "tessera/core/shape.hpp"

namespace tessera {
namespace {

TEST(Shape, NumelMultipliesExtents) {
  EXPECT_EQ(numel({}), 1);  // a scalar holds one element
  EXPECT_EQ(numel({7}), 7);
  EXPECT_EQ(numel({2, 3, 4}), 24);
  EXPECT_EQ(numel({5, 0, 3}), 0);
  EXPECT_EQ(numel({1 << 20, 1 << 20}), int64_t{1} << 40);  // no 32-bit overflow
}

TEST(Shape, PrintsAsBracketedList) {
  EXPECT_EQ(to_string(Shape{}), "[]");
  EXPECT_EQ(to_string(Shape{8}), "[8]");
  EXPECT_EQ(to_string(Shape{8, 128, 3}), "[8, 128, 3]");
}

TEST(Shape, CeilDivCountsRaggedTiles) {
  EXPECT_EQ(ceil_div(1024, 128), 8);
  EXPECT_EQ(ceil_div(1000, 128), 8);
  EXPECT_EQ(ceil_div(1025, 128), 9);
  EXPECT_EQ(ceil_div(1, 128), 1);
  EXPECT_EQ(ceil_div(0, 128), 0);
}

TEST(Shape, RowMajorStridesPutTheLastAxisInnermost) {
  EXPECT_EQ(row_major_strides({}), Shape{});
  EXPECT_EQ(row_major_strides({5}), Shape{1});
  EXPECT_EQ(row_major_strides({2, 3, 4}), (Shape{12, 4, 1}));
  EXPECT_EQ(row_major_strides({4, 1, 6}), (Shape{6, 6, 1}));
}

}  // namespace
}  // namespace tessera

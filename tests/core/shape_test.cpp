// Shape: its std::vector interface (ranks up to Shape::kInline inline, larger ones on the heap),
// and its helpers: element counts, printing, tile counts and row-major strides.
#include <gtest/gtest.h>

#include <stdexcept>
#include <utility>
#include <vector>

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

TEST(Shape, KeepsSmallRanksInlineAndGrowsOntoTheHeapPastThem) {
  Shape s{1, 2, 3, 4};
  const int64_t* inline_data = s.data();
  EXPECT_EQ(s.capacity(), Shape::kInline);
  s.push_back(5);  // past kInline: moved to the heap, elements kept
  EXPECT_NE(s.data(), inline_data);
  EXPECT_EQ(s, (Shape{1, 2, 3, 4, 5}));
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ(s.back(), 5);
  s.pop_back();
  EXPECT_EQ(s, (Shape{1, 2, 3, 4}));
}

TEST(Shape, CopiesAndMovesOwnTheirElementsInlineAndOnTheHeap) {
  for (const Shape& original : {Shape{7, 8}, Shape{1, 2, 3, 4, 5, 6}}) {
    Shape copy = original;
    copy[0] = 99;  // a copy is independent
    EXPECT_NE(original[0], 99);
    Shape moved = std::move(copy);
    EXPECT_EQ(moved[0], 99);
    EXPECT_EQ(moved.size(), original.size());
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from Shape is empty
    copy = moved;               // usable again after a move
    EXPECT_EQ(copy, moved);
    Shape assigned{4};
    assigned = std::move(moved);
    EXPECT_EQ(assigned, copy);
  }
}

TEST(Shape, InsertsAndErasesLikeAVector) {
  Shape s{2, 3};
  s.insert(s.begin(), 1);
  s.insert(s.end(), {4, 5, 6});  // grows past kInline
  EXPECT_EQ(s, (Shape{1, 2, 3, 4, 5, 6}));
  s.insert(s.begin() + 1, s.begin() + 4, s.end());  // from its own elements
  EXPECT_EQ(s, (Shape{1, 5, 6, 2, 3, 4, 5, 6}));
  s.erase(s.begin() + 1, s.begin() + 3);
  s.erase(s.begin());
  EXPECT_EQ(s, (Shape{2, 3, 4, 5, 6}));
  s.resize(2);
  s.resize(4, 9);
  EXPECT_EQ(s, (Shape{2, 3, 9, 9}));
  s.assign(3, 1);
  EXPECT_EQ(s, (Shape{1, 1, 1}));
  EXPECT_EQ(Shape(2, 7), (Shape{7, 7}));
  EXPECT_EQ(Shape(3), (Shape{0, 0, 0}));
}

TEST(Shape, ConvertsToAndFromStdVectorAndCompares) {
  const std::vector<int64_t> v{3, 1, 4, 1, 5};
  const Shape s = v;
  EXPECT_EQ(s, v);
  const std::vector<int64_t> back = s;
  EXPECT_EQ(back, v);
  EXPECT_LT((Shape{1, 2}), (Shape{1, 3}));
  EXPECT_LT((Shape{1, 2}), (Shape{1, 2, 0}));
  EXPECT_NE((Shape{1, 2}), (Shape{2, 1}));
  EXPECT_THROW((void)Shape{}.at(0), std::out_of_range);
}

}  // namespace
}  // namespace tessera

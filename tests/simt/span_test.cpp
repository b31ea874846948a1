// Input spans read in bounds or stop; slots hold the thread's element or nothing. (The host runs
// the same code the device runs; on the device the stop is __trap().)
#include <gtest/gtest.h>

#include <vector>

#include "tessera/simt/kernel.hpp"

namespace tessera::simt {
namespace {

using detail::HardwareIds;
using detail::SimulatedThread;
using detail::SpanAccess;

TEST(Span, InputReadsInBoundsAndFallsBackPastTheEnd) {
  const std::vector<double> v = {1.5, 2.5, 3.5};
  const auto x = SpanAccess::input(v.data(), 3);
  EXPECT_EQ(x.size(), 3);
  EXPECT_EQ(x[2], 3.5);
  EXPECT_EQ(x.get_or(1, -1.0), 2.5);
  EXPECT_EQ(x.get_or(3, -1.0), -1.0);
  EXPECT_EQ(x.get_or(-1, -1.0), -1.0);
  const SimulatedThread thread(HardwareIds{{1, 0, 0}, {0, 0, 0}, {32, 1, 1}, {1, 1, 1}});
  const Index1D i = SimulatedThread::witness<Index1D>();
  EXPECT_EQ(x[i], 2.5);
}

TEST(SpanDeathTest, OutOfBoundsInputReadStops) {
  const std::vector<int> v = {1, 2, 3};
  const auto x = SpanAccess::input(v.data(), 3);
  EXPECT_DEATH((void)x[3], "");
  EXPECT_DEATH((void)x[-1], "");
  const auto m = SpanAccess::input2d(v.data(), 1, 3, 3);
  EXPECT_DEATH((void)m(1, 0), "");
  EXPECT_DEATH((void)m(0, 3), "");
  EXPECT_DEATH((void)m.row(1), "");
}

TEST(Span, MatrixInputReadsByRowAndColumnWithItsPitch) {
  // 2 x 3 matrix stored with a pitch of 4: the fourth column is padding.
  const std::vector<float> v = {1, 2, 3, -9, 4, 5, 6, -9};
  const auto m = SpanAccess::input2d(v.data(), 2, 3, 4);
  EXPECT_EQ(m(1, 2), 6);
  EXPECT_EQ(m.get_or(1, 3, 0.f), 0.f);  // the padding is outside the matrix
  EXPECT_EQ(m.get_or(2, 0, 0.f), 0.f);
  const Span<const float> row = m.row(1);
  EXPECT_EQ(row.size(), 3);
  EXPECT_EQ(row[0], 4);
}

TEST(Slot, WritesAndReadsOnlyTheThreadsElement) {
  std::vector<int> v = {10, 20, 30};
  const auto out = SpanAccess::output<Index1D>(v.data(), 3);
  const SimulatedThread thread(HardwareIds{{1, 0, 0}, {0, 0, 0}, {4, 1, 1}, {1, 1, 1}});
  const Index1D i = SimulatedThread::witness<Index1D>();
  if (auto o = out.at(i)) {
    EXPECT_EQ(o.load(), 20);
    *o += 5;
    *o *= 2;
    EXPECT_EQ(static_cast<int>(*o), 50);
  } else {
    ADD_FAILURE() << "thread 1 of a 3-element span owns element 1";
  }
  EXPECT_EQ(v, (std::vector<int>{10, 50, 30}));
}

TEST(SlotDeathTest, WritingThroughAnEmptySlotStops) {
  std::vector<int> v = {10};
  const auto out = SpanAccess::output<Index1D>(v.data(), 1);
  const SimulatedThread thread(HardwareIds{{3, 0, 0}, {0, 0, 0}, {4, 1, 1}, {1, 1, 1}});
  const Index1D i = SimulatedThread::witness<Index1D>();
  EXPECT_FALSE(out.at(i));
  EXPECT_DEATH(out.at(i).store(1), "");
}

}  // namespace
}  // namespace tessera::simt

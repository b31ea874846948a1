// Errors: typed, and prefixed with the user's source location ("file:line:col: error: ...").
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "tessera/core/error.hpp"

namespace tessera {
namespace {

TEST(SourceLoc, CurrentRecordsTheCallersFileAndLine) {
  const auto [loc, line] = std::pair{SourceLoc::current(), __LINE__};
  EXPECT_STREQ(loc.file, __FILE__);
  EXPECT_EQ(loc.line, static_cast<uint32_t>(line));
  EXPECT_GT(loc.column, 0u);
  EXPECT_TRUE(loc.known());
  EXPECT_FALSE(SourceLoc().known());
}

TEST(SourceLoc, PrintsFileLineColumn) {
  EXPECT_EQ(SourceLoc("kernels/gemm.cpp", 12, 7).str(), "kernels/gemm.cpp:12:7");
}

TEST(Error, LocatedMessageStartsWithTheLocation) {
  EXPECT_EQ(detail::located(SourceLoc("a.cpp", 3, 9), "x is bad"), "a.cpp:3:9: error: x is bad");
  EXPECT_EQ(detail::located(SourceLoc(), "x is bad"), "error: x is bad");
}

TEST(Error, FailAtThrowsTheTypeAskedForWithLocationAndParts) {
  try {
    fail_at<KernelError>(SourceLoc("k.cpp", 40, 5), "tile ", 3, " of ", 2.5, " is '", "z", "'");
    FAIL() << "fail_at returned";
  } catch (const KernelError& e) {
    EXPECT_STREQ(e.what(), "k.cpp:40:5: error: tile 3 of 2.5 is 'z'");
  }
}

TEST(Error, FailThrowsWithoutLocation) {
  try {
    fail<LaunchError>("grid ", 4, " is too large");
    FAIL() << "fail returned";
  } catch (const LaunchError& e) {
    EXPECT_STREQ(e.what(), "grid 4 is too large");
  }
}

template <class E>
void expect_catchable_as_error() {
  try {
    fail<E>("m");
  } catch (const Error& e) {
    EXPECT_NE(dynamic_cast<const E*>(&e), nullptr);
    EXPECT_STREQ(e.what(), "m");
    return;
  }
  FAIL() << "not caught as tessera::Error";
}

TEST(Error, EveryErrorTypeIsATesseraError) {
  expect_catchable_as_error<UsageError>();
  expect_catchable_as_error<KernelError>();
  expect_catchable_as_error<OwnershipError>();
  expect_catchable_as_error<BoundsError>();
  expect_catchable_as_error<LaunchError>();
  expect_catchable_as_error<BackendError>();
  expect_catchable_as_error<InternalError>();
  // User errors and internal errors are distinct types.
  try {
    fail<InternalError>("bug");
  } catch (const KernelError&) {
    FAIL() << "an internal error was caught as a user error";
  } catch (const InternalError&) {
  }
}

TEST(Error, InternalCheckSaysItIsABugAndWhere) {
  const int x = 3;
  const int line = __LINE__ + 2;  // the line of the check
  try {
    TESSERA_INTERNAL_CHECK(x == 4, "x was ", x);
    FAIL() << "the check passed";
  } catch (const InternalError& e) {
    EXPECT_EQ(std::string(e.what()), detail::cat("internal error (a bug in Tessera) at ", __FILE__,
                                                 ":", line, ": x == 4 x was 3"));
  }
  EXPECT_NO_THROW(TESSERA_INTERNAL_CHECK(x == 3));
}

}  // namespace
}  // namespace tessera

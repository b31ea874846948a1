// Ownership rules at run time: a partition needs the only handle to its storage, a moved-from
// handle is dead, an output is reachable through no other argument, and a launch owns its
// arguments until its work is done.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};
TESSERA_KERNEL(two_out, Out<float> p, Out<float> q, In<float> src) {
  p.store(load_like(src, p));
  q.store(load_like(src, q));
};

const std::string kShared =
    "partition() needs the only handle to the tensor's storage, but 2 handles share it (copies, "
    "views, or launches still reading it); drop the other handles, or sync the launches, first";
const std::string kMovedFrom =
    "this Tensor was moved from (into partition(), unpartition() or a launch) and no longer owns "
    "anything; use the handle that operation returned";

int g_line = 0;
template <class F>
void at(int line, F&& f) {
  g_line = line;
  f();
}
std::string this_line() {
  return tessera::detail::cat(__FILE__, ":", g_line);
}

TEST(Partition, OfAHandleWithACopyThrowsAtTheCallAndLeavesTheTensorUsable) {
  auto t = zeros<float>({16}, Device::cpu());
  auto copy_of_t = t;
  const std::string m =
      error_of<OwnershipError>([&] { at(__LINE__, [&] { (void)std::move(t).partition({8}); }); });
  EXPECT_EQ(file_and_line(m), this_line());
  EXPECT_EQ(after_location(m), kShared);
  EXPECT_EQ(t.shape(), Shape{16});  // the failed partition consumed nothing
  // The twin: once the copy is gone, the same call succeeds.
  copy_of_t = Tensor<float, 1>();
  auto p = std::move(t).partition({8});
  EXPECT_EQ(p.grid(), Shape{2});
}

TEST(Partition, OfAHandleWithAViewThrows) {
  auto t = zeros<float>({16}, Device::cpu());
  auto view = t.slice(0, 4, 12);
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({8}); })),
            kShared);
  view = Tensor<float, 1>();
  EXPECT_NO_THROW((void)std::move(t).partition({8}));
}

TEST(MovedFrom, ToVectorThrowsAtTheCall) {
  auto t = zeros<float>({8}, Device::cpu());
  auto p = std::move(t).partition({4});
  const std::string m =
      error_of<OwnershipError>([&] { at(__LINE__, [&] { (void)t.to_vector(); }); });  // NOLINT(bugprone-use-after-move): the test uses it on purpose
  EXPECT_EQ(file_and_line(m), this_line());
  EXPECT_EQ(after_location(m), kMovedFrom);
  EXPECT_TRUE(t.empty());
}

TEST(MovedFrom, PartitionAndShapeThrow) {
  auto t = zeros<float>({8}, Device::cpu());
  auto u = std::move(t);
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({4}); })),  // NOLINT(bugprone-use-after-move): the test uses it on purpose
            kMovedFrom);
  EXPECT_EQ(error_of<OwnershipError>([&] { (void)t.shape(); }), "error: " + kMovedFrom);
  EXPECT_EQ(u.shape(), Shape{8});
}

TEST(MovedFrom, TensorAsALaunchInputThrowsNamingTheParameter) {
  auto x = ones<float>({16}, Device::cpu());
  auto moved = std::move(x);
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  const std::string m = error_of<OwnershipError>([&] { (void)copy(std::move(z), x); });  // NOLINT(bugprone-use-after-move): the test uses it on purpose
  EXPECT_EQ(after_location(m),
            "kernel 'copy': argument 2 ('x', In) is a moved-from tensor; use the handle that the "
            "operation it was moved into returned");
  // The twin: the live handle launches.
  auto z2 = zeros<float>({16}, Device::cpu()).partition({8});
  auto [out, in] = copy(std::move(z2), moved).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(16, 1.0f));
}

TEST(MovedFrom, PartitionAsALaunchOutputThrows) {
  auto x = ones<float>({16}, Device::cpu());
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  auto taken = std::move(z);
  const std::string m = error_of<OwnershipError>([&] { (void)copy(std::move(z), x); });  // NOLINT(bugprone-use-after-move): the test uses it on purpose
  EXPECT_EQ(after_location(m),
            "kernel 'copy': argument 1 ('z', Out) is a moved-from tensor; use the handle that the "
            "operation it was moved into returned");
  EXPECT_EQ(error_of<OwnershipError>([&] { (void)std::move(z).unpartition(); }),
            "error: " + kMovedFrom);
}

// Two wraps of one buffer are two storages, so only the launcher's address check can see that
// the output is also the input.
TEST(Aliasing, OutputWrappedTwiceOverOneBufferIsRejectedAtLaunch) {
  std::vector<float> buffer(32, 1.0f);
  auto out = wrap_unowned_unchecked(buffer.data(), {32});
  auto in = wrap_unowned_unchecked(buffer.data(), {32});
  auto z = std::move(out).partition({8});
  const std::string m = error_of<OwnershipError>([&] { (void)copy(std::move(z), in); });
  EXPECT_EQ(after_location(m),
            "kernel 'copy': argument 1 ('z', Out) overlaps argument 2 ('x', In) in memory; an "
            "output may not be reachable through another argument, or tiles would race with reads "
            "of it");
}

TEST(Aliasing, OutputOverlappingASliceOfAnotherWrapIsRejected) {
  std::vector<float> buffer(32, 1.0f);
  auto out = wrap_unowned_unchecked(buffer.data(), {16});  // elements [0, 16)
  auto whole = wrap_unowned_unchecked(buffer.data(), {32});
  auto overlapping = whole.slice(0, 12, 28);  // [12, 28) overlaps [0, 16)
  auto z = std::move(out).partition({8});
  const std::string m = error_of<OwnershipError>([&] { (void)copy(std::move(z), overlapping); });
  EXPECT_EQ(after_location(m),
            "kernel 'copy': argument 1 ('z', Out) overlaps argument 2 ('x', In) in memory; an "
            "output may not be reachable through another argument, or tiles would race with reads "
            "of it");
}

TEST(Aliasing, DisjointSliceOfTheSameBufferLaunchesAndReadsTheRightElements) {
  std::vector<float> buffer(32);
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<float>(i);
  auto out = wrap_unowned_unchecked(buffer.data(), {16});  // [0, 16)
  auto whole = wrap_unowned_unchecked(buffer.data(), {32});
  auto upper = whole.slice(0, 16, 32);  // [16, 32): touches the output at no byte
  auto [z, x] = copy(std::move(out).partition({8}), upper).sync();
  for (size_t i = 0; i < 16; ++i) EXPECT_EQ(buffer[i], static_cast<float>(i + 16)) << i;
}

TEST(Aliasing, TwoOutputsOverOneBufferAreRejected) {
  std::vector<float> buffer(16, 0.0f);
  auto a = wrap_unowned_unchecked(buffer.data(), {16});
  auto b = wrap_unowned_unchecked(buffer.data() + 8, {8});
  auto x = ones<float>({16}, Device::cpu());
  auto pa = std::move(a).partition({8});
  auto pb = std::move(b).partition({4});
  const std::string m =
      error_of<OwnershipError>([&] { (void)two_out(std::move(pa), std::move(pb), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'two_out': argument 1 ('p', Out) overlaps argument 2 ('q', Out) in memory; an "
            "output may not be reachable through another argument, or tiles would race with reads "
            "of it");
}

TEST(Future, OwnsItsInputUntilSynced) {
  auto x = ones<float>({16}, Device::cpu());
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  EXPECT_EQ(x.handle().use_count(), 1);
  auto future = copy(std::move(z), x);
  EXPECT_EQ(x.handle().use_count(), 2);  // the future holds a handle to the input
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(x).partition({8}); })),
            kShared);
  {
    auto [out, in] = std::move(future).sync();  // hands the arguments back
    EXPECT_EQ(in.handle().storage(), x.handle().storage());
    EXPECT_EQ(x.handle().use_count(), 2);
  }
  EXPECT_EQ(x.handle().use_count(), 1);
  EXPECT_NO_THROW((void)std::move(x).partition({8}));
}

}  // namespace
}  // namespace tessera::test

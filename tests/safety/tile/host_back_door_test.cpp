// Class 1 of issue 10: host back doors into storage a launch owns. What C++ can forbid is a
// compile error (compile_fail/host_*.cpp: a handle's copy, writers and address are private; a
// partition's storage has no address; nothing rebuilds a tensor over a partition). What it cannot
// is checked at run time here: the one route to a raw pointer, Tensor::unchecked_data(), marks
// the storage escaped, and escaped storage is never partitioned (so never written by a launch),
// whichever handle, copy or view took the pointer. Each attack has a twin that runs.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(doubled, Out<float> z, In<float> x) { z.store(load_like(x, z) * 2.0f); };

const char* const kEscaped =
    "partition() needs the only handle to the tensor's storage, but its address was handed out "
    "by unchecked_data(), and a raw pointer is a handle the checks cannot count; kernels may read "
    "this tensor but not write it: partition a copy instead, t.to(t.device()).partition(tile)";

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i);
  return v;
}

// Attack: keep the pointer, then partition the tensor and let a kernel write it while another
// thread writes through the pointer. The partition is refused at the call.
TEST(HostBackDoor, APointerTakenBeforePartitioningMakesThePartitionAnOwnershipError) {
  auto t = zeros<float>({64}, Device::cpu());
  float* kept = t.unchecked_data();
  ASSERT_NE(kept, nullptr);
  const int line = __LINE__ + 1;
  const std::string m = error_of<OwnershipError>([&] { (void)std::move(t).partition({16}); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", line));
  EXPECT_EQ(after_location(m), kEscaped);
  EXPECT_FALSE(t.empty());  // NOLINT(bugprone-use-after-move): refused, so nothing was moved
}
// Twin: the same tensor without the pointer is partitioned and written.
TEST(HostBackDoor, ATensorWhoseAddressNeverEscapedIsPartitionedAndWritten) {
  auto x = from_host(iota(64), {64}, Device::cpu());
  auto t = zeros<float>({64}, Device::cpu());
  EXPECT_FALSE(t.handle().storage()->escaped());
  auto [z, x1] = doubled(std::move(t).partition({16}), x).sync();
  const std::vector<float> out = std::move(z).unpartition().to_vector();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], 2.0f * i) << i;
}
// Twin: a copy of an escaped tensor is new storage, which may be partitioned and written.
TEST(HostBackDoor, ACopyOfAnEscapedTensorIsPartitionedAndWritten) {
  auto x = from_host(iota(64), {64}, Device::cpu());
  auto t = zeros<float>({64}, Device::cpu());
  (void)t.unchecked_data();
  auto fresh = t.to(t.device());
  EXPECT_TRUE(t.handle().storage()->escaped());
  EXPECT_FALSE(fresh.handle().storage()->escaped());
  auto [z, x1] = doubled(std::move(fresh).partition({16}), x).sync();
  EXPECT_EQ(std::move(z).unpartition().to_vector().at(63), 126.0f);
}

// Attack: take the pointer through a copy, drop the copy, and partition the original: the escape
// belongs to the storage, not to the handle that took it.
TEST(HostBackDoor, APointerTakenThroughACopyStillEscapesTheStorage) {
  auto t = zeros<float>({64}, Device::cpu());
  {
    const Tensor<float, 1> copy = t;
    (void)copy.unchecked_data();
  }
  EXPECT_EQ(t.handle().use_count(), 1);  // the only handle again, as far as counting can see
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({16}); })),
            kEscaped);
}

// Attack: take the pointer through a view of the tensor, drop the view, partition the whole.
TEST(HostBackDoor, APointerTakenThroughAViewStillEscapesTheStorage) {
  auto t = zeros<float>({8, 8}, Device::cpu());
  {
    auto row = t.slice(0, 3, 4);
    float* p = row.unchecked_data();
    ASSERT_NE(p, nullptr);
  }
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({4, 4}); })),
            kEscaped);
}

// Attack: unpartition and take the pointer, then partition again: refused the second time.
TEST(HostBackDoor, AnEscapeAfterUnpartitionStopsTheNextPartition) {
  auto p = zeros<float>({64}, Device::cpu()).partition({16});
  auto t = std::move(p).unpartition();
  (void)t.unchecked_data();
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] { (void)std::move(t).partition({16}); })),
            kEscaped);
}

// The promise unchecked_data() asks for lets launches read escaped storage: an escaped input is
// read like any other.
TEST(HostBackDoor, AnEscapedTensorIsStillReadByALaunch) {
  auto x = from_host(iota(64), {64}, Device::cpu());
  float* p = x.unchecked_data();
  p[5] = 50.0f;  // written through the pointer while no launch is pending
  auto [z, x1] = doubled(zeros<float>({64}, Device::cpu()).partition({16}), x).sync();
  EXPECT_EQ(std::move(z).unpartition().to_vector().at(5), 100.0f);
}

// The pointer is the tensor's first element, the same address its handle reports as a number.
TEST(HostBackDoor, TheUncheckedPointerIsTheElementTheHandleReportsAsANumber) {
  auto t = from_host(iota(24), {4, 6}, Device::cpu());
  auto view = t.slice(1, 2, 5);
  const uintptr_t address = view.handle().address();
  float* p = view.unchecked_data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p), address);
  EXPECT_EQ(p[0], 2.0f);
  EXPECT_EQ(p[6], 8.0f);  // the next row of the storage
}

// Attack: unchecked_data() on a moved-from tensor: an OwnershipError at the call, not a null
// pointer.
TEST(HostBackDoor, UncheckedDataOfAMovedFromTensorIsAnOwnershipErrorAtTheCall) {
  auto t = zeros<float>({8}, Device::cpu());
  auto p = std::move(t).partition({8});
  const int line = __LINE__ + 1;
  const std::string m = error_of<OwnershipError>([&] { (void)t.unchecked_data(); });  // NOLINT
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", line));
  EXPECT_EQ(after_location(m),
            "this Tensor was moved from (into partition(), unpartition() or a launch) and no "
            "longer owns anything; use the handle that operation returned");
  (void)std::move(p).unpartition();
}

// A partition's storage is the tensor's (identity), and it reports no escape.
TEST(HostBackDoor, APartitionShowsItsStorageButNoAddress) {
  auto t = zeros<float>({64}, Device::cpu());
  const runtime::Storage* storage = t.handle().storage();
  auto p = std::move(t).partition({16});
  EXPECT_EQ(p.storage(), storage);
  EXPECT_EQ(p.storage()->bytes(), 64 * sizeof(float));
  EXPECT_FALSE(p.storage()->escaped());
  EXPECT_FALSE(p.storage()->unowned());
}

// wrap_unowned_unchecked memory is the caller's by name: it is not "escaped" (its own opt-out, with
// its own promise), and may be an output; an overlap with another argument is still refused.
TEST(HostBackDoor, WrappedCallerMemoryIsUnownedAndMayBeAnOutput) {
  std::vector<float> buffer(64, 0.0f);
  auto w = wrap_unowned_unchecked(buffer.data(), {64});
  EXPECT_TRUE(w.handle().storage()->unowned());
  EXPECT_FALSE(w.handle().storage()->escaped());
  auto x = from_host(iota(64), {64}, Device::cpu());
  auto [z, x1] = doubled(std::move(w).partition({16}), x).sync();
  EXPECT_EQ(buffer[10], 20.0f);
}

}  // namespace
}  // namespace tessera::test

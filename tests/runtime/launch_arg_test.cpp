// runtime::check_launch is public, and so is LaunchArg: a launch assembled by hand must not get
// past the partition rule. An Out argument needs the PartitionMark that only a Partition gives
// (HandleAccess::mark), of its own handle; a plain tensor's handle -- an input's, shared with
// copies -- cannot be made an output.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// A launch of `copy(z, x)` (z = x) put together by hand, as a user could.
const SourceLoc kSiteLoc = SourceLoc::current();
const char kSiteIdentity = 0;
const runtime::KernelSite kSite{&kSiteIdentity, "hand_copy", "Out<float> z, In<float> x", kSiteLoc};

ir::Function trace_copy(std::vector<ir::Param> params) {
  return tile::detail::trace("hand_copy", std::move(params), kSiteLoc, [] {
    Out<float> z{tile::detail::ParamTag{0}};
    In<float> x{tile::detail::ParamTag{1}};
    z.store(load_like(x, z));
  });
}

runtime::LaunchArg out_arg(const runtime::TensorHandle& h, runtime::PartitionMark mark) {
  runtime::LaunchArg a;
  a.kind = ir::ParamKind::Out;
  a.dtype = DType::F32;
  a.declared_rank = kDynamicRank;
  a.tensor = &h;
  static const Shape tile{8};
  a.tile = tile;
  a.partitioned = mark;
  return a;
}
runtime::LaunchArg in_arg(const runtime::TensorHandle& h) {
  runtime::LaunchArg a;
  a.kind = ir::ParamKind::In;
  a.dtype = DType::F32;
  a.tensor = &h;
  return a;
}

const std::string kNotAPartition =
    "kernel 'hand_copy': argument 1 ('z', Out) is not a partition's handle; an output is written "
    "tile by tile only through a partition, std::move(t).partition(tile), which needs the only "
    "handle to its storage";

TEST(HandMadeLaunchArg, PlainTensorHandleAsAnOutputIsRefused) {
  auto shared = zeros<float>({16}, Device::cpu());
  const auto copy_of_shared = shared;  // a second handle: partition() would refuse it
  auto x = ones<float>({16}, Device::cpu());
  const std::vector<runtime::LaunchArg> args{out_arg(shared.handle(), {}), in_arg(x.handle())};
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] {
              (void)runtime::check_launch(kSite, args, trace_copy, SourceLoc::current());
            })),
            kNotAPartition);
  EXPECT_EQ(copy_of_shared.to_vector(), std::vector<float>(16, 0.0f));
}

TEST(HandMadeLaunchArg, AnotherPartitionsMarkDoesNotMakeAPlainTensorAnOutput) {
  auto p = zeros<float>({16}, Device::cpu()).partition({8});
  auto shared = zeros<float>({16}, Device::cpu());
  auto x = ones<float>({16}, Device::cpu());
  const std::vector<runtime::LaunchArg> args{
      out_arg(shared.handle(), runtime::HandleAccess::mark(p)), in_arg(x.handle())};
  EXPECT_EQ(after_location(error_of<OwnershipError>([&] {
              (void)runtime::check_launch(kSite, args, trace_copy, SourceLoc::current());
            })),
            kNotAPartition);
}

TEST(HandMadeLaunchArg, APartitionWithItsOwnMarkLaunches) {
  // The twin: the same hand-made launch over a partition, marked by it, passes and runs.
  auto p = zeros<float>({16}, Device::cpu()).partition({8});
  auto x = ones<float>({16}, Device::cpu());
  const std::vector<runtime::LaunchArg> args{
      out_arg(runtime::HandleAccess::of(p), runtime::HandleAccess::mark(p)), in_arg(x.handle())};
  runtime::CheckedLaunch checked =
      runtime::check_launch(kSite, args, trace_copy, SourceLoc::current());
  std::move(checked).start()->wait();
  EXPECT_EQ(std::move(p).unpartition().to_vector(), std::vector<float>(16, 1.0f));
}

}  // namespace
}  // namespace tessera::test

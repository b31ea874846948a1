// Every rule prepare<K>() checks a launch shape against, on made-up device and function limits:
// each rejected shape names the kernel, the rule and both values.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/simt/check.hpp"

namespace tessera::simt::detail {
namespace {

std::string launch_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const LaunchError& e) {
    return e.what();
  }
  return "(no LaunchError)";
}

ContractView view1d() {
  ContractView c;
  c.kernel = "k1";
  c.rank = 1;
  c.witness = "Index1D";
  return c;
}

Geometry geometry(index_t gx, index_t bx, index_t gy = 1, index_t by = 1) {
  Geometry g;
  g.grid[0] = gx;
  g.grid[1] = gy;
  g.block[0] = bx;
  g.block[1] = by;
  return g;
}

DeviceLimits h200() {
  DeviceLimits d;
  d.name = "Fake H200";
  d.cc = {9, 0};
  d.shared_per_block_optin = 227 * 1024;
  return d;
}

TEST(ContractCheck, AShapeWithinEveryRulePasses) {
  ContractView c = view1d();
  c.block_rule = BlockRule::Exactly;
  c.block[0] = 256;
  EXPECT_NO_THROW(check_contracted_launch(c, geometry(4096, 256), h200(), {}));
  EXPECT_NO_THROW(check_contracted_launch(c, geometry(0, 256), h200(), {}));  // nothing to do
}

TEST(ContractCheck, ExactBlockShapeMustMatch) {
  ContractView c = view1d();
  c.block_rule = BlockRule::Exactly;
  c.block[0] = 256;
  const std::string e =
      launch_error([&] { check_contracted_launch(c, geometry(8, 128), h200(), {}); });
  EXPECT_NE(e.find("kernel 'k1'"), std::string::npos) << e;
  EXPECT_NE(e.find("block shape (128) is not the contract's exact block shape (256)"),
            std::string::npos)
      << e;
}

TEST(ContractCheck, BlockMustStayWithinTheContractsMaximumAlongEachAxis) {
  ContractView c = view1d();
  c.rank = 2;
  c.witness = "Index2D";
  c.block_rule = BlockRule::AtMost;
  c.block[0] = 32;
  c.block[1] = 8;
  EXPECT_NO_THROW(check_contracted_launch(c, geometry(1, 32, 1, 4), h200(), {}));
  const std::string e =
      launch_error([&] { check_contracted_launch(c, geometry(1, 16, 1, 16), h200(), {}); });
  EXPECT_NE(e.find("block shape (16, 16) is larger than the contract allows along y "
                   "(16 threads, at most 8)"),
            std::string::npos)
      << e;
}

TEST(ContractCheck, TileWitnessNeedsItsExactBlockShape) {
  ContractView c = view1d();
  c.kernel = "gemm";
  c.rank = 2;
  c.witness = "TileIndex2D";
  c.witness_block[0] = 16;
  c.witness_block[1] = 8;
  const std::string e =
      launch_error([&] { check_contracted_launch(c, geometry(4, 16, 4, 16), h200(), {}); });
  EXPECT_NE(e.find("kernel 'gemm'"), std::string::npos) << e;
  EXPECT_NE(e.find("TileIndex2D witness"), std::string::npos) << e;
  EXPECT_NE(e.find("differ along y: 16 and 8"), std::string::npos) << e;
}

TEST(ContractCheck, WarpWitnessNeedsWholeWarps) {
  ContractView c = view1d();
  c.witness = "WarpIndex1D";
  c.block_x_multiple = 32;
  EXPECT_NO_THROW(check_contracted_launch(c, geometry(4, 96), h200(), {}));
  const std::string e =
      launch_error([&] { check_contracted_launch(c, geometry(4, 48), h200(), {}); });
  EXPECT_NE(e.find("a multiple of 32 (whole warps), but it is 48"), std::string::npos) << e;
}

TEST(ContractCheck, DeviceMustMeetTheMinimumComputeCapability) {
  ContractView c = view1d();
  c.min_cc = {9, 0};
  DeviceLimits a100 = h200();
  a100.name = "Fake A100";
  a100.cc = {8, 0};
  const std::string e =
      launch_error([&] { check_contracted_launch(c, geometry(1, 32), a100, {}); });
  EXPECT_NE(e.find("needs compute capability 9.0 or newer, but device 0 (Fake A100) is 8.0"),
            std::string::npos)
      << e;
  c.min_cc = {8, 6};
  EXPECT_NE(
      launch_error([&] { check_contracted_launch(c, geometry(1, 32), a100, {}); }).find("8.6"),
      std::string::npos);
  EXPECT_NO_THROW(check_contracted_launch(c, geometry(1, 32), h200(), {}));
}

TEST(ContractCheck, BlockExtentsArePositiveAndWithinTheDevice) {
  const ContractView c = view1d();
  EXPECT_NE(launch_error([&] {
              check_contracted_launch(c, geometry(1, 0), h200(), {});
            }).find("block extent along x is 0"),
            std::string::npos);
  Geometry g = geometry(1, 4);
  g.block[2] = 128;  // the device allows 64 along z
  const std::string e = launch_error([&] { check_device_limits("k3", g, h200(), {}); });
  EXPECT_NE(e.find("block extent along z is 128, more than the 64 that device 0 (Fake H200) "
                   "allows"),
            std::string::npos)
      << e;
}

TEST(ContractCheck, ThreadsPerBlockWithinTheDeviceAndTheFunction) {
  ContractView c = view1d();
  c.rank = 2;
  c.witness = "Index2D";
  const std::string device_error =
      launch_error([&] { check_contracted_launch(c, geometry(1, 64, 1, 32), h200(), {}); });
  EXPECT_NE(device_error.find("has 2048 threads, more than the 1024 per block"), std::string::npos)
      << device_error;

  FunctionLimits heavy;
  heavy.max_threads_per_block = 384;
  heavy.registers = 168;
  const std::string function_error =
      launch_error([&] { check_contracted_launch(c, geometry(1, 32, 1, 16), h200(), heavy); });
  EXPECT_NE(function_error.find("has 512 threads, more than the 384 per block this kernel can "
                                "run with"),
            std::string::npos)
      << function_error;
  EXPECT_NE(function_error.find("168 registers"), std::string::npos) << function_error;
}

TEST(ContractCheck, GridWithinTheDevice) {
  ContractView c = view1d();
  c.rank = 2;
  c.witness = "Index2D";
  const std::string e =
      launch_error([&] { check_contracted_launch(c, geometry(1, 32, 70000, 1), h200(), {}); });
  EXPECT_NE(e.find("grid extent along y is 70000, more than the 65535"), std::string::npos) << e;
  EXPECT_NE(launch_error([&] {
              check_contracted_launch(c, geometry(-1, 32), h200(), {});
            }).find("grid extent along x is -1"),
            std::string::npos);
}

TEST(ContractCheck, SharedMemoryWithinWhatTheDeviceLetsABlockOptInTo) {
  ContractView c = view1d();
  Geometry g = geometry(1, 128);
  g.dynamic_shared_bytes = 200 * 1024;
  FunctionLimits f;
  f.static_shared_bytes = 40 * 1024;
  const std::string e = launch_error([&] { check_contracted_launch(c, g, h200(), f); });
  EXPECT_NE(e.find("204800 bytes of dynamic shared memory plus the kernel's 40960 bytes of "
                   "static shared memory make 245760 bytes per block, more than the 232448"),
            std::string::npos)
      << e;
  f.static_shared_bytes = 0;
  EXPECT_NO_THROW(check_contracted_launch(c, g, h200(), f));
}

TEST(ContractCheck, UncheckedLaunchesSkipTheContractButNotTheDevice) {
  // A shape no contract rule looks at (check_device_limits has none), still held to the device.
  EXPECT_NO_THROW(check_device_limits("raw", geometry(10, 1000, 10, 1), h200(), {}));
  EXPECT_NE(launch_error([&] {
              check_device_limits("raw", geometry(1, 2048), h200(), {});
            }).find("kernel 'raw'"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::simt::detail

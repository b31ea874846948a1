// Class 3 of issue 10 on the SIMT path: the launch's shared-memory size is checked in
// overflow-checked arithmetic, so a dynamic size near the top of index_t cannot wrap past the
// device's limit and reach the driver as a huge size_t. The twin, a size within the limit, passes.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "tessera/core/error.hpp"
#include "tessera/simt/check.hpp"

namespace tessera::simt::detail {
namespace {

std::string launch_error_of(const Geometry& g, const FunctionLimits& f) {
  try {
    check_device_limits("k", g, DeviceLimits{}, f);
  } catch (const LaunchError& e) {
    return e.what();
  }
  return "(no LaunchError)";
}

TEST(HostSimtSizes, DynamicSharedMemoryThatWrapsWithTheStaticIsRefused) {
  Geometry g;
  g.dynamic_shared_bytes = std::numeric_limits<index_t>::max();
  FunctionLimits f;
  f.static_shared_bytes = 1024;
  EXPECT_EQ(launch_error_of(g, f),
            "kernel 'k': 9223372036854775807 bytes of dynamic shared memory plus the kernel's 1024 "
            "bytes of static shared memory make more than 2^63 - 1 bytes per block, more than the "
            "49152 bytes that device 0 allows; use less shared memory.");
}
TEST(HostSimtSizes, SharedMemoryWithinTheLimitPasses) {
  Geometry g;
  g.dynamic_shared_bytes = 16 * 1024;
  FunctionLimits f;
  f.static_shared_bytes = 1024;
  EXPECT_NO_THROW(check_device_limits("k", g, DeviceLimits{}, f));
}

}  // namespace
}  // namespace tessera::simt::detail

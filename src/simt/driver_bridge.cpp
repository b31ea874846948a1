// The bridge in use, and its replacement by tests.
#include "tessera/simt/detail/driver_bridge.hpp"

#include <atomic>

namespace tessera::simt::detail {

DriverBridge& cuda_driver_bridge();  // driver_bridge_cuda.cpp

namespace {
std::atomic<DriverBridge*> g_installed{nullptr};
}

DriverBridge& driver_bridge() {
  DriverBridge* b = g_installed.load(std::memory_order_acquire);
  return b ? *b : cuda_driver_bridge();
}

ScopedDriverBridge::ScopedDriverBridge(DriverBridge& bridge)
    : previous_(g_installed.exchange(&bridge, std::memory_order_acq_rel)) {}

ScopedDriverBridge::~ScopedDriverBridge() {
  g_installed.store(previous_, std::memory_order_release);
}

}  // namespace tessera::simt::detail

#include "tessera/runtime/launch_profile.hpp"

#include <utility>

#include "phase_clock.hpp"

namespace tessera::runtime {

void profile_launches(bool on) {
  g_launch_profiling.store(on, std::memory_order_relaxed);
  t_launch_profile = {};
}

LaunchProfile take_launch_profile() {
  return std::exchange(t_launch_profile, {});
}

}  // namespace tessera::runtime

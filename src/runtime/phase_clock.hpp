// The launch profile's clock (tessera/runtime/launch_profile.hpp), for the runtime's launch path:
// while profiling is off it costs one relaxed atomic load. Private to the runtime.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "tessera/runtime/launch_profile.hpp"

namespace tessera::runtime {

inline std::atomic<bool> g_launch_profiling{false};
inline thread_local LaunchProfile t_launch_profile;

// Adds the time since it was made, or since its last mark, to one phase of this thread's sums.
class PhaseClock {
 public:
  PhaseClock() : on_(g_launch_profiling.load(std::memory_order_relaxed)) {
    if (on_) last_ = std::chrono::steady_clock::now();
  }
  void mark(uint64_t LaunchProfile::*phase) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    t_launch_profile.*phase += static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count());
    last_ = now;
  }
  void count_launch() {
    if (on_) ++t_launch_profile.launches;
  }

 private:
  bool on_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace tessera::runtime

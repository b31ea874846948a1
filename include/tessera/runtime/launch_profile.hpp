// Where a launch's host time goes, for bench/launch: the launch path split into its phases,
// summed over the launches this thread makes while profiling is on. Off by default, and then it
// costs a launch one relaxed atomic load.
#pragma once

#include <cstdint>

namespace tessera::runtime {

struct LaunchProfile {
  uint64_t launches = 0;
  // Nanoseconds, summed over the launches:
  uint64_t checks_ns = 0;  // arguments alive, ranks, devices, the grid, partitions, overlaps
  uint64_t lookup_ns = 0;  // the specialization's key and the cache lookup (a build, if cold)
  uint64_t pack_ns = 0;    // the backend's arguments, and the device's limits checked on them
  uint64_t start_ns = 0;   // ordering: finding the launches to follow, recording this one
  uint64_t queue_ns = 0;   // queueing the work: on a GPU the driver's calls (launch, event)
  // Of queue_ns, on a GPU: the kernel's parameters packed and the driver's launch call, and the
  // events recorded as the stream's marks (src/runtime/gpu_timeline.hpp). The rest of queue_ns is
  // the error report, other streams' orders and the Completion.
  uint64_t driver_launch_ns = 0;
  uint64_t marks_ns = 0;
};

// Turns profiling on or off (for every thread) and clears this thread's sums.
void profile_launches(bool on);
// This thread's sums since profiling was turned on or last taken; clears them.
LaunchProfile take_launch_profile();

}  // namespace tessera::runtime

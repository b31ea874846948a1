// Reads a kernel's PTX for the programmatic-dependent-launch rule of the code generator: on sm_90+
// every kernel executes griddepcontrol.wait before its first global memory access, so a launch
// that overlaps the kernel before it (launch.cpp) cannot read what that kernel has not yet written
// nor write what it still reads.
#pragma once

#include <string>

namespace tessera::test {

// What is wrong with the entry `entry` of `ptx` under that rule, or "" when it holds: exactly one
// griddepcontrol.wait, in the entry's straight-line start (no branch before it reaches past it),
// no global access (ld/st/atom/red/cp.async/TMA/generic ld or st/a call) before it (an L2 bulk
// prefetch, cp.async.bulk.prefetch.L2.global, is a hint and may come before it), and
// griddepcontrol.launch_dependents only after it.
std::string grid_dependency_violation(const std::string& ptx, const std::string& entry);

// The instructions of the entry's body before its griddepcontrol.wait (for failure messages).
std::string before_wait(const std::string& ptx, const std::string& entry);

}  // namespace tessera::test

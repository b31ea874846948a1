// What the rest of the runtime asks of graphs (runtime/graph.hpp): whether this thread is
// capturing, recording a checked launch, and the checks that keep a graph's tensors its own.
// Every check costs one atomic load while no graph holds a storage. Private to the runtime.
#pragma once

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/launch.hpp"

#include "pending_access.hpp"

namespace tessera::runtime {

// The storages a captured launch uses, held (so they outlive the caller's handles), and what
// to call each in an error ("argument 2 ('x', In) of kernel 'scale' (defined at ...), an f32
// tensor of shape [4096]"). Made by check_launch while this thread captures.
struct CaptureArgs {
  std::vector<std::shared_ptr<Storage>> storages;  // one per tensor argument, in order
  std::vector<std::string> names;
};

// Whether this thread is inside capture().
bool capturing() noexcept;
// Made by check_launch when capturing(): refuses a launch on another device than the graph's.
std::shared_ptr<const CaptureArgs> capture_arguments(const KernelSite& site,
                                                     std::span<const LaunchArg> args, Device device,
                                                     SourceLoc call);
// Records a checked launch in this thread's capture, and returns its Completion, already
// finished: nothing runs until a replay.
std::shared_ptr<Completion> capture_launch(const std::shared_ptr<const std::string>& label,
                                           const std::shared_ptr<const CompiledKernel>& kernel,
                                           const std::shared_ptr<const GpuKernel>& gpu,
                                           const backend::LaunchArgs& args,
                                           const std::vector<std::pair<const Storage*, bool>>& uses,
                                           const CaptureArgs& held);

// In check_launch: a GraphError if an output of the launch is held by a graph other than the one
// this thread captures (a partition kept from a capture, written outside the graph).
void graph_check_launch(const KernelSite& site, std::span<const LaunchArg> args, SourceLoc call);
// In partition(): a GraphError if a graph other than the one this thread captures holds the
// storage; returns the handles that the capture itself holds (0 or 1), which do not count
// against partition()'s "only handle" rule.
long graph_check_partition(const Storage& s, SourceLoc loc);
// Before the host reads or writes the storage: a GraphError inside capture() if a captured launch
// writes it (it has not run).
void graph_check_host_access(const Storage& s);
// Before unchecked_data(): a GraphError if a live graph writes the storage.
void graph_check_escape(const Storage& s, SourceLoc loc);
// A GraphError inside capture(): `what` runs at once and cannot be recorded; `remedy` says what
// to do instead.
void refuse_in_capture(std::string_view what,
                       std::string_view remedy = "do it before capture() or after it");

// Held by a launch from before it asks for its predecessors until it has recorded itself, when
// one of its storages is held by a graph: a replay (which a graph's held tensors do not stop,
// unlike a launch's partition) must not interleave between the two. Empty (nothing locked)
// while no graph holds any of them.
std::unique_lock<std::mutex> graph_order_lock(const std::vector<StorageUse>& uses);

}  // namespace tessera::runtime

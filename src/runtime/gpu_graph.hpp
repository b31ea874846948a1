// The GPU half of graphs (runtime/graph.hpp): the captured launches as one CUDA graph, built by
// stream capture on a private stream and instantiated once, and replayed with one cuGraphLaunch.
// Private to the runtime; implemented on backend/cuda in gpu_graph.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tessera/backend/launch_args.hpp"
#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

class Completion;
class GpuKernel;
class GpuGraph;

struct GpuGraphStep {
  const GpuKernel* kernel;
  const backend::LaunchArgs* args;
};

// Builds and instantiates the graph of `steps`, in order, on GPU `d`. Throws BackendError naming
// the driver call that refused.
std::shared_ptr<GpuGraph> gpu_graph_build(Device d, const std::vector<GpuGraphStep>& steps);
// Launches the graph on `stream` (null: the device's own), after the work queued on the device's
// stream so far and after `after`, each waited for on the device. The Completion's wait() throws
// the first error a kernel of the graph reported in a replay (its error report).
std::shared_ptr<Completion> gpu_graph_replay(const std::shared_ptr<GpuGraph>& graph,
                                             std::shared_ptr<const std::string> label, void* stream,
                                             const std::vector<std::shared_ptr<Completion>>& after);

}  // namespace tessera::runtime

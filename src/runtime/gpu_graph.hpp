// The GPU half of graphs (runtime/graph.hpp): the captured launches as one CUDA graph, built by
// stream capture on a private stream and instantiated once, and replayed with one cuGraphLaunch.
// Private to the runtime; implemented on backend/cuda in gpu_graph.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
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
  // The storage of each tensor argument and whether the launch writes it: launches that share
  // none run concurrently in the graph (graph_plan.hpp).
  std::vector<std::pair<const void*, bool>> uses;
};

// Builds and instantiates the graph of `steps`, in order, on GPU `d`. Throws BackendError naming
// the driver call that refused.
std::shared_ptr<GpuGraph> gpu_graph_build(Device d, const std::vector<GpuGraphStep>& steps);
// Records `steps` (the launches `graph` was built from, rebound to other tensors or scalars: the
// same kernels in the same order) and updates the instantiated graph in place
// (cuGraphExecUpdate), with no new instantiation: replays queued before run the old launches,
// later ones the new. False, `graph` replaying as before, where the driver refuses the update;
// the caller builds a new graph then. Throws BackendError if recording fails. Call it while no
// replay of `graph` is being issued (g_order_mu).
bool gpu_graph_update(GpuGraph& graph, const std::vector<GpuGraphStep>& steps);

// Graphs instantiated and updated in place so far in this process (for tests).
struct GpuGraphCounts {
  uint64_t instantiations = 0;
  uint64_t updates_in_place = 0;
};
GpuGraphCounts gpu_graph_counts();
// The nodes of the graph recorded last in this process, by type, its edges and its root nodes
// (those that follow nothing: launches that may start at once; -1: the driver cannot count
// them). For tests and the bench: a graph of n launches of kernels with error
// reports from k kernels holds n kernel nodes, k report copies (2k where the module's report is
// not laid out in one piece) and k memsets.
struct GpuGraphNodes {
  int64_t kernels = 0, copies = 0, memsets = 0, others = 0, edges = 0, roots = 0;
  // Edges of type CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC: a launch captured with programmatic
  // stream serialization behind a kernel (backend/cuda/launch.cpp); -1 where not counted.
  int64_t programmatic_edges = 0;
};
GpuGraphNodes gpu_graph_last_nodes();
// Launches the graph on `stream` (null: the device's own), after the work queued on the device's
// stream so far and after `after`, each waited for on the device. The Completion's wait() throws
// the first error a kernel of the graph reported in a replay (its error report).
std::shared_ptr<Completion> gpu_graph_replay(const std::shared_ptr<GpuGraph>& graph,
                                             std::shared_ptr<const std::string> label, void* stream,
                                             const std::vector<std::shared_ptr<Completion>>& after);

}  // namespace tessera::runtime

// The node plan of a graph's CUDA graph (gpu_graph.cpp), worked out on the host so that it can be
// tested without a GPU: which captured launches must run after which (a hazard on a storage they
// share: read after write, write after read, write after write), and one copy of each reporting
// kernel's error report after the last of its launches, instead of one after every launch.
// Private to the runtime.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace tessera::runtime {

// One captured launch as the plan sees it.
struct GraphPlanStep {
  const void* kernel = nullptr;  // its kernel (one error report per kernel's module)
  bool reports = false;          // the kernel has an error report
  // The storages the launch uses and whether it writes each (a storage may appear twice).
  std::vector<std::pair<const void*, bool>> uses;
};

struct GraphPlan {
  // For each launch, the earlier launches it must follow, ascending: the hazards on its storages,
  // less those another of them already follows (so a chain is one edge per launch).
  std::vector<std::vector<size_t>> after;
  // The launches no later launch follows: a graph's last work, which the report copies follow.
  std::vector<size_t> last;
  // One per kernel that has an error report, in the order of its first launch, with its
  // launches: the kernel writes the report in place (the first error wins), and it is copied
  // out once, after all of them.
  struct Report {
    const void* kernel = nullptr;
    std::vector<size_t> launches;
  };
  std::vector<Report> reports;
};

GraphPlan plan_graph(std::span<const GraphPlanStep> steps);

// The edits that turn a graph recorded on one stream -- a chain of `nodes` nodes: the plan's
// launches in order, then the report copies and clearings -- into the plan's layout: the chain's
// edges into and between the launches replaced by the plan's (each launch after its hazards, the
// first report node after the graph's last launches). As (from, to) node indices, sorted, only
// the edges that differ.
struct GraphEdits {
  std::vector<std::pair<size_t, size_t>> removed, added;
};
GraphEdits graph_edits(const GraphPlan& plan, size_t nodes);

}  // namespace tessera::runtime

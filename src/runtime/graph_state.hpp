// The state behind a Graph (runtime/graph.hpp) and the registry of which graphs hold which
// storages: shared by capture and replay (graph.cpp) and rebinding (graph_rebind.cpp). Private to
// the runtime.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera/backend/launch_args.hpp"
#include "tessera/runtime/graph.hpp"

#include "gpu_graph.hpp"
#include "pending_access.hpp"

namespace tessera {

namespace runtime {
class GpuGraph;  // gpu_graph.hpp
}

struct Graph::State {
  std::shared_ptr<const std::string> label;  // "graph 'step' (captured at step.cpp:12:3)"
  std::optional<Device> device;              // of the first captured launch
  struct Step {
    std::shared_ptr<const std::string> label;
    std::shared_ptr<const runtime::CompiledKernel> kernel;
    std::shared_ptr<const runtime::GpuKernel> gpu;
    backend::LaunchArgs args;
    // The storage of each tensor argument, in order, and whether the launch writes it.
    std::vector<std::pair<const runtime::Storage*, bool>> uses;
  };
  // Shared with the replays queued on the CPU workers, which may outlive the graph.
  std::shared_ptr<std::vector<Step>> steps = std::make_shared<std::vector<Step>>();
  // Every storage the captured launches use, once (written if any of them writes it), and the
  // graph's own handle to each, in the same order.
  std::vector<runtime::StorageUse> uses;
  std::vector<std::shared_ptr<runtime::Storage>> held;
  std::vector<std::string> what;  // each storage as its first captured use saw it (Hold::what)
  std::shared_ptr<runtime::GpuGraph> gpu;  // on a GPU, once captured
  // Held by a rebind from start to end, so that two rebinds of one graph do not lose one;
  // steps, uses and gpu are swapped under g_order_mu, which replays hold while they read them.
  std::mutex rebind_mu;
  ~State();
};

namespace runtime {

// One graph's hold on a storage.
struct Hold {
  const Graph::State* graph;
  bool written;
  std::string what;  // the tensor, as the first captured launch that used it saw it
};

// Which graphs hold which storage.
struct Registry {
  std::mutex mu;
  std::unordered_map<const Storage*, std::vector<Hold>> holds;
};
Registry& registry();
// How many storages some graph holds: every check returns at once while it is zero.
extern std::atomic<size_t> g_held;
// Taken by a replay, by a rebind while it swaps a graph's launches, and by a launch that uses a
// held storage, from predecessors() to record().
extern std::mutex g_order_mu;
// The graph this thread captures into, if any.
extern thread_local Graph::State* t_capture;

// The first hold on `s` by a graph other than the one this thread captures, or null. Under the
// registry's lock.
const Hold* foreign_hold(const Storage* s);
// A captured launch as gpu_graph_build() takes it: the kernel, its arguments and its storages.
GpuGraphStep gpu_graph_step(const Graph::State::Step& step);

}  // namespace runtime
}  // namespace tessera

// Graphs on a GPU (gpu_graph.hpp): the captured launches recorded by stream capture into one
// CUDA graph, laid out as graph_plan.hpp says: edges only where launches share a storage, and the
// kernels' error reports written in place and copied into memory of the graph's own once, after
// the last launch (a copy and a clearing node after each launch made four nodes of every kernel,
// each a few microseconds of the replay). Replayed with one cuGraphLaunch. Every driver call's
// result is checked and becomes a BackendError naming the call.
#include "gpu_graph.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <utility>

#include "gpu_context.hpp"
#include "gpu_kernel.hpp"
#include "graph_plan.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/event.hpp"
#include "tessera/backend/cuda/memory.hpp"
#include "tessera/core/shape.hpp"
#include "tessera/runtime/env.hpp"
#include "tessera/runtime/launch.hpp"

namespace tessera::runtime {

namespace cuda = backend::cuda;

class GpuGraph {
 public:
  explicit GpuGraph(const cuda::DeviceContext& ctx) : ctx(&ctx) {}
  // Destroyed once no replay's work refers to it: every replay is then done, or ordered before
  // the device's stream, where the reports are freed. An instantiated graph still running is
  // freed by the driver when it completes.
  // Never throws (a destructor; at exit the driver may be gone): failures are ignored, as a
  // stream's destruction's are.
  ~GpuGraph() {
    try {
      ctx->make_current();
      if (exec) (void)cuda::driver().cuGraphExecDestroy(exec);
      if (graph) (void)cuda::driver().cuGraphDestroy(graph);
    } catch (...) {
    }
    if (report_memory) cuda::device_free(*ctx, report_memory);
  }
  GpuGraph(const GpuGraph&) = delete;
  GpuGraph& operator=(const GpuGraph&) = delete;

  const cuda::DeviceContext* ctx;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  // The error report of each kernel of the graph that has one (all its launches' first error),
  // in the order of its first launch; in report_memory.
  std::vector<std::pair<const GpuKernel*, void*>> reports;
  void* report_memory = nullptr;
  GraphPlan plan;  // the layout it was recorded with
};

namespace {

// A replay's event, as the Completion sees it; holds the graph while the replay may run.
class GraphWork final : public DeviceWork {
 public:
  GraphWork(std::unique_ptr<cuda::Event> event, std::shared_ptr<GpuGraph> graph)
      : event_(std::move(event)), graph_(std::move(graph)) {}
  // The reports are freed on the device's stream: behind this replay, if it ran on another one.
  ~GraphWork() override {
    if (graph_->reports.empty() || event_->stream() == graph_->ctx->stream()) return;
    try {
      event_->make_wait(graph_->ctx->stream());
    } catch (...) {  // the driver refused the wait: wait here before the reports can be freed
      try {
        event_->synchronize();
      } catch (...) {
      }
    }
  }
  bool done() override { return event_->query(); }
  // The reports hold what the latest replay that ran wrote: a replay queued right behind this one
  // may have run already, so a kernel's error is reported by the replay that made it, and
  // possibly by the one before it too (never by none).
  void wait() override {
    event_->synchronize();
    for (const auto& [kernel, report] : graph_->reports) check_error_report(*kernel, report);
  }
  void order_on(void* stream) override { order_event_on(*event_, stream); }

 private:
  std::unique_ptr<cuda::Event> event_;
  std::shared_ptr<GpuGraph> graph_;
};

// Ends a capture on `stream` whatever happens (a stream left capturing refuses most later
// work), and destroys the stream.
class CaptureStream {
 public:
  explicit CaptureStream(const cuda::DeviceContext& ctx) {
    ctx.make_current();
    TESSERA_CU(cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
  }
  ~CaptureStream() {
    try {
      if (capturing_) {
        CUgraph partial = nullptr;
        if (cuda::driver().cuStreamEndCapture(stream_, &partial) == CUDA_SUCCESS && partial)
          (void)cuda::driver().cuGraphDestroy(partial);
      }
      (void)cuda::driver().cuStreamDestroy(stream_);
    } catch (...) {  // driver() throws only when there is no driver, and then no stream
    }
  }
  CaptureStream(const CaptureStream&) = delete;
  CaptureStream& operator=(const CaptureStream&) = delete;
  CUstream get() const { return stream_; }
  void begin() {
    // Relaxed: this thread queues only the graph's launches meanwhile, and other threads' calls
    // (allocations, synchronizations) must not be refused because this stream captures.
    TESSERA_CU(cuStreamBeginCapture, stream_, CU_STREAM_CAPTURE_MODE_RELAXED);
    capturing_ = true;
  }
  CUgraph end() {
    capturing_ = false;
    CUgraph g = nullptr;
    TESSERA_CU(cuStreamEndCapture, stream_, &g);
    return g;
  }

 private:
  CUstream stream_ = nullptr;
  bool capturing_ = false;
};

}  // namespace

namespace {

std::atomic<uint64_t> g_instantiations{0};
std::atomic<uint64_t> g_updates_in_place{0};
std::mutex g_last_mu;  // guards g_last_nodes
GpuGraphNodes g_last_nodes;

// The edge-data forms of the graph edits (cuGraphAddDependencies_v2, ...) came with CUDA 12.3.
constexpr int kEdgeEditsDriverVersion = 12030;

bool can_edit_edges() {
  const cuda::DriverApi& d = cuda::driver();
  return d.version >= kEdgeEditsDriverVersion && d.cuGraphGetRootNodes &&
         d.cuGraphNodeGetDependentNodes && d.cuGraphAddDependencies &&
         d.cuGraphRemoveDependencies && d.cuGraphNodeGetType;
}

GraphPlan plan_of(const std::vector<GpuGraphStep>& steps) {
  std::vector<GraphPlanStep> plan_steps(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    plan_steps[i].kernel = steps[i].kernel;
    plan_steps[i].reports = steps[i].kernel->loaded.error_flag != 0;
    for (const auto& [storage, written] : steps[i].uses)
      plan_steps[i].uses.emplace_back(storage, written);
  }
  return plan_graph(plan_steps);
}

// The nodes of a graph captured on one stream, in the order they were queued: a chain from its
// one root, with the data of each link (links[i] joins nodes[i] to nodes[i + 1]). A launch with
// programmatic stream serialization (launch.cpp) is captured behind the kernel before it with a
// programmatic edge, whose non-default data the edge queries must ask for (without it they fail
// with CUDA_ERROR_LOSSY_QUERY) and a removal must name. Empty if it is not one chain.
struct Chain {
  std::vector<CUgraphNode> nodes;
  std::vector<CUgraphEdgeData> links;
};
Chain chain_of(CUgraph g) {
  const cuda::DriverApi& d = cuda::driver();
  size_t n = 0;
  if (d.cuGraphGetRootNodes(g, nullptr, &n) != CUDA_SUCCESS || n != 1) return {};
  CUgraphNode node = nullptr;
  if (d.cuGraphGetRootNodes(g, &node, &n) != CUDA_SUCCESS || n != 1) return {};
  Chain chain;
  chain.nodes.push_back(node);
  for (;;) {
    // Asked with room for two: the count comes back as the number filled in, so 2 means "more
    // than one" (not a chain), and no separate count query is needed.
    CUgraphNode next[2] = {};
    CUgraphEdgeData data[2] = {};
    size_t count = 2;
    if (d.cuGraphNodeGetDependentNodes(node, next, data, &count) != CUDA_SUCCESS) return {};
    if (count == 0 || !next[0]) return chain;
    if (count != 1) return {};
    node = next[0];
    chain.nodes.push_back(node);
    chain.links.push_back(data[0]);
  }
}

// Replaces the chain of the launches' nodes by the plan's edges: a launch follows only the
// launches it has a hazard with, and the report copies follow the graph's last launches. Left a
// chain (correct, only slower) where the driver cannot edit edges or a launch queued no node (an
// empty grid). A link the plan keeps keeps its data (programmatic between two tile kernels); an
// edge the plan adds is a full one (the later node starts when the earlier has completed), which
// orders as much as a programmatic edge would, only without the overlap.
void apply_plan(CUgraph g, const GraphPlan& plan, size_t launches) {
  if (launches < 2 || launches != plan.after.size() || !can_edit_edges()) return;
  const Chain chain = chain_of(g);
  if (chain.nodes.size() < launches) return;
  for (size_t i = 0; i < chain.nodes.size(); ++i) {
    CUgraphNodeType type{};
    TESSERA_CU(cuGraphNodeGetType, chain.nodes[i], &type);
    if ((type == CU_GRAPH_NODE_TYPE_KERNEL) != (i < launches)) return;
  }
  const GraphEdits edits = graph_edits(plan, chain.nodes.size());
  if (!edits.removed.empty()) {
    // graph_edits removes only links of the chain, (i, i + 1).
    std::vector<CUgraphNode> from, to;
    std::vector<CUgraphEdgeData> data;
    for (const auto& [a, b] : edits.removed) {
      TESSERA_INTERNAL_CHECK(b == a + 1 && a < chain.links.size(), "the graph plan removes edge ",
                             a, " -> ", b, ", not a link of the captured chain");
      from.push_back(chain.nodes[a]);
      to.push_back(chain.nodes[b]);
      data.push_back(chain.links[a]);
    }
    TESSERA_CU(cuGraphRemoveDependencies, g, from.data(), to.data(), data.data(), from.size());
  }
  if (!edits.added.empty()) {
    std::vector<CUgraphNode> from, to;
    for (const auto& [a, b] : edits.added) {
      from.push_back(chain.nodes[a]);
      to.push_back(chain.nodes[b]);
    }
    TESSERA_CU(cuGraphAddDependencies, g, from.data(), to.data(), nullptr, from.size());
  }
}

// What a recorded graph holds, by node type (kept for tests and the bench).
GpuGraphNodes count_nodes(CUgraph g) {
  GpuGraphNodes c;
  const cuda::DriverApi& d = cuda::driver();
  if (!d.cuGraphGetNodes || !d.cuGraphNodeGetType) return c;
  size_t n = 0;
  if (d.cuGraphGetNodes(g, nullptr, &n) != CUDA_SUCCESS) return c;
  std::vector<CUgraphNode> nodes(n);
  if (n && d.cuGraphGetNodes(g, nodes.data(), &n) != CUDA_SUCCESS) return c;
  for (CUgraphNode node : nodes) {
    CUgraphNodeType type{};
    if (d.cuGraphNodeGetType(node, &type) != CUDA_SUCCESS) continue;
    if (type == CU_GRAPH_NODE_TYPE_KERNEL)
      ++c.kernels;
    else if (type == CU_GRAPH_NODE_TYPE_MEMCPY)
      ++c.copies;
    else if (type == CU_GRAPH_NODE_TYPE_MEMSET)
      ++c.memsets;
    else
      ++c.others;
  }
  size_t edges = 0, roots = 0;
  if (d.version >= kEdgeEditsDriverVersion && d.cuGraphGetEdges &&
      d.cuGraphGetEdges(g, nullptr, nullptr, nullptr, &edges) == CUDA_SUCCESS)
    c.edges = static_cast<int64_t>(edges);
  else
    c.edges = -1;
  c.programmatic_edges = c.edges < 0 ? -1 : 0;
  if (c.edges > 0) {
    std::vector<CUgraphNode> from(edges), to(edges);
    std::vector<CUgraphEdgeData> data(edges);
    if (d.cuGraphGetEdges(g, from.data(), to.data(), data.data(), &edges) == CUDA_SUCCESS) {
      for (size_t i = 0; i < edges; ++i)
        c.programmatic_edges += data[i].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
    } else {
      c.programmatic_edges = -1;
    }
  }
  c.roots = d.cuGraphGetRootNodes && d.cuGraphGetRootNodes(g, nullptr, &roots) == CUDA_SUCCESS
                ? static_cast<int64_t>(roots)
                : -1;
  return c;
}

// Destroys a recorded graph that nothing took.
struct GraphOwner {
  CUgraph graph = nullptr;
  ~GraphOwner() {
    try {
      if (graph) (void)cuda::driver().cuGraphDestroy(graph);
    } catch (...) {
    }
  }
};

// Records the launches of `steps` into a new CUDA graph laid out as `plan`, the report of
// plan.reports[r] copied to `report_of[r]`.
CUgraph record_steps(const cuda::DeviceContext& ctx, const std::vector<GpuGraphStep>& steps,
                     const GraphPlan& plan, const std::vector<void*>& report_of) {
  CaptureStream s(ctx);
  s.begin();
  size_t launches = 0;
  bool every_launch_queued = true;
  for (const GpuGraphStep& step : steps) {
    const GpuKernel& k = *step.kernel;
    // No report per launch: the kernel writes its module's report, copied once at the end.
    cuda::queue_launch(k.loaded, k.params, *step.args, k.config, nullptr, s.get());
    if (numel(step.args->grid) > 0)
      ++launches;
    else
      every_launch_queued = false;
  }
  for (size_t r = 0; r < plan.reports.size(); ++r)
    cuda::queue_report_copy(static_cast<const GpuKernel*>(plan.reports[r].kernel)->loaded,
                            report_of[r], s.get());
  GraphOwner g{s.end()};
  if (every_launch_queued) apply_plan(g.graph, plan, launches);
  const GpuGraphNodes nodes = count_nodes(g.graph);
  {
    std::lock_guard lock(g_last_mu);
    g_last_nodes = nodes;
  }
  if (env_list_has("TESSERA_LOG", "graph"))
    std::fprintf(stderr,
                 "tessera: graph of %zu launches: %lld kernel nodes, %lld report copies, %lld "
                 "memsets, %lld other nodes, %lld edges (%lld programmatic), %lld roots\n",
                 steps.size(), static_cast<long long>(nodes.kernels),
                 static_cast<long long>(nodes.copies), static_cast<long long>(nodes.memsets),
                 static_cast<long long>(nodes.others), static_cast<long long>(nodes.edges),
                 static_cast<long long>(nodes.programmatic_edges),
                 static_cast<long long>(nodes.roots));
  return std::exchange(g.graph, nullptr);
}

}  // namespace

std::shared_ptr<GpuGraph> gpu_graph_build(Device d, const std::vector<GpuGraphStep>& steps) {
  const cuda::DeviceContext& ctx = gpu_context(d);
  auto g = std::make_shared<GpuGraph>(ctx);
  const GraphPlan plan = plan_of(steps);
  // The reports first, outside the capture (allocated on the device's stream, which a replay
  // waits for before it starts): one block, a report per reporting kernel.
  std::vector<void*> report_of;
  if (!plan.reports.empty()) {
    g->report_memory = cuda::device_allocate(ctx, plan.reports.size() * cuda::kErrorReportBytes);
    for (size_t r = 0; r < plan.reports.size(); ++r) {
      report_of.push_back(static_cast<char*>(g->report_memory) + r * cuda::kErrorReportBytes);
      g->reports.emplace_back(static_cast<const GpuKernel*>(plan.reports[r].kernel), report_of[r]);
    }
  }
  g->graph = record_steps(ctx, steps, plan, report_of);
  g->plan = plan;
  ctx.make_current();
  TESSERA_CU(cuGraphInstantiateWithFlags, &g->exec, g->graph, 0);
  g_instantiations.fetch_add(1, std::memory_order_relaxed);
  return g;
}

bool gpu_graph_update(GpuGraph& graph, const std::vector<GpuGraphStep>& steps) {
  const cuda::DeviceContext& ctx = *graph.ctx;
  // The same reports: the graph's kernels (and so their reports) are unchanged.
  const GraphPlan plan = plan_of(steps);
  // An update keeps the graph's edges: a rebind that changed which launches share a storage
  // needs other ones, so a new graph.
  if (plan.after != graph.plan.after || plan.last != graph.plan.last) return false;
  if (plan.reports.size() != graph.reports.size()) return false;
  std::vector<void*> report_of;
  for (size_t r = 0; r < plan.reports.size(); ++r) {
    if (plan.reports[r].kernel != graph.reports[r].first) return false;
    report_of.push_back(graph.reports[r].second);
  }
  GraphOwner fresh{record_steps(ctx, steps, plan, report_of)};
  ctx.make_current();
  CUgraphExecUpdateResultInfo info{};
  // The driver changes the kernel nodes' parameters of the instantiated graph for the launches
  // queued from now on (those queued before run as they were), or refuses when the graphs
  // differ in more than parameters; it is left as it was then, and the caller builds anew.
  if (cuda::driver().cuGraphExecUpdate(graph.exec, fresh.graph, &info) != CUDA_SUCCESS)
    return false;
  std::swap(graph.graph, fresh.graph);  // the old recording is destroyed with `fresh`
  g_updates_in_place.fetch_add(1, std::memory_order_relaxed);
  return true;
}

GpuGraphNodes gpu_graph_last_nodes() {
  std::lock_guard lock(g_last_mu);
  return g_last_nodes;
}

GpuGraphCounts gpu_graph_counts() {
  return {g_instantiations.load(std::memory_order_relaxed),
          g_updates_in_place.load(std::memory_order_relaxed)};
}

std::shared_ptr<Completion> gpu_graph_replay(
    const std::shared_ptr<GpuGraph>& graph, std::shared_ptr<const std::string> label, void* stream,
    const std::vector<std::shared_ptr<Completion>>& after) {
  const cuda::DeviceContext& ctx = *graph->ctx;
  const CUstream queue = stream ? static_cast<CUstream>(stream) : ctx.stream();
  // As a single launch (gpu_launch): after what the device's stream holds (allocations, fills,
  // copies, the reports' allocation) and after the launches it must follow.
  if (queue != ctx.stream()) cuda::Event(ctx).make_wait(queue);
  for (const std::shared_ptr<Completion>& c : after) c->order_on(queue);
  // A kernel with an error report writes it in its module, shared with its launches outside the
  // graph: a replay on another stream than the kernel's last launch waits for that launch
  // (gpu_launch does the same). Locked in address order, so two replays cannot deadlock.
  std::vector<const GpuKernel*> reporting;
  for (const auto& [kernel, report] : graph->reports) reporting.push_back(kernel);
  std::sort(reporting.begin(), reporting.end());
  reporting.erase(std::unique(reporting.begin(), reporting.end()), reporting.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (const GpuKernel* k : reporting) {
    locks.emplace_back(k->order_mu);
    if (k->last_launch && k->last_stream != queue) k->last_launch->order_on(queue);
  }
  ctx.make_current();
  TESSERA_CU(cuGraphLaunch, graph->exec, queue);
  std::unique_ptr<cuda::Event> event;
  try {
    event = std::make_unique<cuda::Event>(ctx, queue);
  } catch (...) {  // the graph runs: let it finish before the error reaches the caller
    (void)cuda::driver().cuStreamSynchronize(queue);
    throw;
  }
  auto done = std::make_shared<Completion>(std::make_unique<GraphWork>(std::move(event), graph),
                                           std::move(label));
  for (const GpuKernel* k : reporting) {
    k->last_launch = done;
    k->last_stream = queue;
  }
  return done;
}

}  // namespace tessera::runtime

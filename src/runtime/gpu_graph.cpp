// Graphs on a GPU (gpu_graph.hpp): the captured launches recorded by stream capture into one
// CUDA graph, each followed by the copy of its error report into memory of the graph's own, and
// replayed with one cuGraphLaunch. Every driver call's result is checked and becomes a
// BackendError naming the call.
#include "gpu_graph.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "gpu_context.hpp"
#include "gpu_kernel.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/event.hpp"
#include "tessera/backend/cuda/memory.hpp"
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
    for (const auto& [kernel, report] : reports) cuda::device_free(*ctx, report);
  }
  GpuGraph(const GpuGraph&) = delete;
  GpuGraph& operator=(const GpuGraph&) = delete;

  const cuda::DeviceContext* ctx;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  // The error report of each captured launch of a kernel that has one, in capture order.
  std::vector<std::pair<const GpuKernel*, void*>> reports;
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

// Records the launches of `steps` into a new CUDA graph, step i's error report copied to
// `report_of[i]` (null: the kernel has none).
CUgraph record_steps(const cuda::DeviceContext& ctx, const std::vector<GpuGraphStep>& steps,
                     const std::vector<void*>& report_of) {
  CaptureStream s(ctx);
  s.begin();
  for (size_t i = 0; i < steps.size(); ++i) {
    const GpuKernel& k = *steps[i].kernel;
    cuda::queue_launch(k.loaded, k.params, *steps[i].args, k.config, report_of[i], s.get());
  }
  return s.end();
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

}  // namespace

std::shared_ptr<GpuGraph> gpu_graph_build(Device d, const std::vector<GpuGraphStep>& steps) {
  const cuda::DeviceContext& ctx = gpu_context(d);
  auto g = std::make_shared<GpuGraph>(ctx);
  // The reports first, outside the capture (they are allocated on the device's stream, which a
  // replay waits for before it starts).
  std::vector<void*> report_of(steps.size(), nullptr);
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i].kernel->loaded.error_flag) {
      report_of[i] = cuda::device_allocate(ctx, cuda::kErrorReportBytes);
      g->reports.emplace_back(steps[i].kernel, report_of[i]);
    }
  g->graph = record_steps(ctx, steps, report_of);
  ctx.make_current();
  TESSERA_CU(cuGraphInstantiateWithFlags, &g->exec, g->graph, 0);
  g_instantiations.fetch_add(1, std::memory_order_relaxed);
  return g;
}

bool gpu_graph_update(GpuGraph& graph, const std::vector<GpuGraphStep>& steps) {
  const cuda::DeviceContext& ctx = *graph.ctx;
  // The same reports, step by step: the graph's kernels (and so their reports) are unchanged.
  std::vector<void*> report_of(steps.size(), nullptr);
  size_t next = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!steps[i].kernel->loaded.error_flag) continue;
    if (next >= graph.reports.size() || graph.reports[next].first != steps[i].kernel) return false;
    report_of[i] = graph.reports[next++].second;
  }
  if (next != graph.reports.size()) return false;
  GraphOwner fresh{record_steps(ctx, steps, report_of)};
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

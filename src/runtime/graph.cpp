// Graphs (runtime/graph.hpp): recording launches while a thread captures, the graph's holds on
// the storages it uses (and the checks that keep them its own), and replays. A replay is one
// piece of work in the per-storage tracking (pending_access.hpp), a writer of every storage a
// captured launch writes and a reader of the rest: the CPU backend runs the recorded launches in
// order on a worker, a GPU launches the instantiated CUDA graph (gpu_graph.cpp).
#include "tessera/runtime/graph.hpp"

#include <algorithm>
#include <atomic>
#include <span>

#include "tessera/backend/cpu/interpreter.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/stream.hpp"

#include "cpu_queue.hpp"
#include "gpu_graph.hpp"
#include "graph_capture.hpp"
#include "graph_state.hpp"
#include "handle_internals.hpp"

namespace tessera {

namespace runtime {

// Leaked on purpose: a graph held by a static may die after the registry.
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}
std::atomic<size_t> g_held{0};
std::mutex g_order_mu;
thread_local Graph::State* t_capture = nullptr;

GpuGraphStep gpu_graph_step(const Graph::State::Step& step) {
  GpuGraphStep g{step.gpu.get(), &step.args, {}};
  for (const auto& [storage, written] : step.uses) g.uses.emplace_back(storage, written);
  return g;
}

const Hold* foreign_hold(const Storage* s) {
  auto it = registry().holds.find(s);
  if (it == registry().holds.end()) return nullptr;
  for (const Hold& h : it->second)
    if (h.graph != t_capture) return &h;
  return nullptr;
}

namespace {

bool any_held() {
  return g_held.load(std::memory_order_acquire) != 0;
}

const char* use_of(const Hold& h) {
  return h.written ? "writes" : "reads";
}

}  // namespace

bool capturing() noexcept {
  return t_capture != nullptr;
}

std::shared_ptr<const CaptureArgs> capture_arguments(const KernelSite& site,
                                                     std::span<const LaunchArg> args, Device device,
                                                     SourceLoc call) {
  const Graph::State& g = *t_capture;
  if (g.device && *g.device != device)
    fail_at<GraphError>(call, "kernel '", site.name, "' runs on ", device.str(), ", but ", *g.label,
                        " already holds launches on ", g.device->str(),
                        "; a graph replays on one device: capture the launches of each device "
                        "into a graph of its own");
  auto c = std::make_shared<CaptureArgs>();
  const std::vector<std::string> names = parameter_names(site.param_text, args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg& a = args[i];
    if (!a.tensor) continue;
    c->storages.push_back(HandleInternals::storage(*a.tensor));
    c->names.push_back(detail::cat("argument ", i + 1, " ('", names[i], "', ",
                                   a.kind == ir::ParamKind::Out     ? "Out"
                                   : a.kind == ir::ParamKind::Accum ? "Accum"
                                                                    : "In",
                                   ") of kernel '", site.name, "'",
                                   site.loc.known() ? " (defined at " + site.loc.str() + ")" : "",
                                   ", a ", dtype_name(a.tensor->dtype()), " tensor of shape ",
                                   to_string(a.tensor->shape())));
  }
  return c;
}

std::shared_ptr<Completion> capture_launch(const std::shared_ptr<const std::string>& label,
                                           const std::shared_ptr<const CompiledKernel>& kernel,
                                           const std::shared_ptr<const GpuKernel>& gpu,
                                           const backend::LaunchArgs& args,
                                           const std::vector<std::pair<const Storage*, bool>>& uses,
                                           const CaptureArgs& held) {
  Graph::State& g = *t_capture;
  TESSERA_INTERNAL_CHECK(uses.size() == held.storages.size(), "a captured launch uses ",
                         uses.size(), " storages but holds ", held.storages.size());
  auto done = std::make_shared<Completion>(label);
  done->finish();  // nothing runs now: the launch's future hands its arguments back at once
  g.steps->push_back({label, kernel, gpu, args, uses});
  g.device = kernel->device;
  std::lock_guard lock(registry().mu);
  for (size_t i = 0; i < uses.size(); ++i) {
    const auto [storage, written] = uses[i];
    auto mine = std::find_if(g.uses.begin(), g.uses.end(),
                             [&](const StorageUse& u) { return u.storage == storage; });
    std::vector<Hold>& holds = registry().holds[storage];
    if (mine != g.uses.end()) {
      mine->write = mine->write || written;
      for (Hold& h : holds)
        if (h.graph == &g) h.written = h.written || written;
      continue;
    }
    g.uses.push_back({storage, written});
    g.held.push_back(held.storages[i]);
    g.what.push_back(held.names[i]);
    if (holds.empty()) g_held.fetch_add(1, std::memory_order_acq_rel);
    holds.push_back({&g, written, held.names[i]});
  }
  return done;
}

void graph_check_launch(const KernelSite& site, std::span<const LaunchArg> args, SourceLoc call) {
  if (!any_held()) return;
  std::lock_guard lock(registry().mu);
  for (size_t i = 0; i < args.size(); ++i) {
    const bool accum = args[i].kind == ir::ParamKind::Accum;
    if ((args[i].kind != ir::ParamKind::Out && !accum) || !args[i].tensor) continue;
    if (const Hold* h = foreign_hold(args[i].tensor->storage()))
      fail_at<GraphError>(call, "kernel '", site.name, "': argument ", i + 1,
                          accum ? " (Accum)" : " (Out)", " writes a tensor that ", *h->graph->label,
                          " holds (", h->what, "): the graph ", use_of(*h),
                          " it on every replay, so nothing outside the graph may write it while "
                          "the graph lives; capture this launch into the graph, or destroy the "
                          "graph first");
  }
}

long graph_check_partition(const Storage& s, SourceLoc loc) {
  if (!any_held()) return 0;
  std::lock_guard lock(registry().mu);
  if (const Hold* h = foreign_hold(&s))
    fail_at<GraphError>(loc, "partition() of a tensor that ", *h->graph->label, " holds (", h->what,
                        "): the graph ", use_of(*h),
                        " it on every replay, so it cannot be written outside the graph while "
                        "the graph lives; partition a copy (t.to(t.device())), or destroy the "
                        "graph first");
  auto it = registry().holds.find(&s);
  return it != registry().holds.end() && t_capture ? 1 : 0;
}

void graph_check_host_access(const Storage& s) {
  if (!t_capture) return;
  std::lock_guard lock(registry().mu);
  auto it = registry().holds.find(&s);
  if (it == registry().holds.end()) return;
  for (const Hold& h : it->second)
    if (h.graph == t_capture && h.written)
      fail<GraphError>("inside the capture of ", *t_capture->label,
                       ": the host uses a tensor that a captured launch writes (", h.what,
                       "), but captured launches run only at replay(), so it holds nothing they "
                       "computed; use it after g.replay().sync()");
}

void graph_check_escape(const Storage& s, SourceLoc loc) {
  if (!any_held()) return;
  std::lock_guard lock(registry().mu);
  auto it = registry().holds.find(&s);
  if (it == registry().holds.end()) return;
  for (const Hold& h : it->second)
    if (h.written)
      fail_at<GraphError>(loc, "unchecked_data() of a tensor that ", *h.graph->label,
                          " writes on every replay (", h.what,
                          "); a raw pointer to it would race with the replays: copy it "
                          "(t.to(t.device())), or destroy the graph first");
}

void refuse_in_capture(std::string_view what, std::string_view remedy) {
  if (t_capture)
    fail<GraphError>("inside the capture of ", *t_capture->label, ": ", what,
                     " runs at once and cannot be recorded into a graph; ", remedy);
}

std::unique_lock<std::mutex> graph_order_lock(const std::vector<StorageUse>& uses) {
  if (!any_held()) return {};
  {
    std::lock_guard lock(registry().mu);
    const bool held = std::any_of(uses.begin(), uses.end(), [](const StorageUse& u) {
      return registry().holds.count(u.storage) != 0;
    });
    if (!held) return {};
  }
  return std::unique_lock(g_order_mu);
}

GraphCapture::GraphCapture(std::string name, SourceLoc loc) {
  if (t_capture)
    fail_at<GraphError>(loc, "capture() inside the capture of ", *t_capture->label,
                        ": graphs do not nest; capture these launches into the outer graph, or "
                        "end it first");
  state_ = std::make_shared<Graph::State>();
  state_->label = std::make_shared<const std::string>(
      detail::cat("graph", name.empty() ? "" : " '" + name + "'",
                  loc.known() ? " (captured at " + loc.str() + ")" : ""));
  t_capture = state_.get();
}

GraphCapture::~GraphCapture() {
  if (state_ && t_capture == state_.get()) t_capture = nullptr;
}

Graph GraphCapture::finish() {
  TESSERA_INTERNAL_CHECK(state_ && t_capture == state_.get(), "a capture finished twice");
  t_capture = nullptr;
  std::shared_ptr<Graph::State> s = std::move(state_);
  if (s->device && s->device->is_cuda()) {
    std::vector<GpuGraphStep> steps;
    for (const Graph::State::Step& step : *s->steps) steps.push_back(gpu_graph_step(step));
    s->gpu = gpu_graph_build(*s->device, steps);
  }
  return Graph(std::move(s));
}

}  // namespace runtime

Graph::State::~State() {
  // The storages are let go after this body (members), outside the registry's lock: a storage's
  // end may free memory behind a queued replay.
  std::lock_guard lock(runtime::registry().mu);
  for (const runtime::StorageUse& u : uses) {
    auto it = runtime::registry().holds.find(u.storage);
    if (it == runtime::registry().holds.end()) continue;
    std::erase_if(it->second, [&](const runtime::Hold& h) { return h.graph == this; });
    if (it->second.empty()) {
      runtime::registry().holds.erase(it);
      runtime::g_held.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
}

GraphRun& GraphRun::operator=(GraphRun&& other) noexcept {
  if (this != &other) {
    release();
    done_ = std::move(other.done_);
  }
  return *this;
}

const runtime::Completion& GraphRun::alive() const {
  if (!done_)
    fail<UsageError>(
        "this GraphRun was moved from or synced, and refers to no replay; use the "
        "one that replay() returned");
  return *done_;
}

void GraphRun::wait() const {
  alive().wait();
}

void GraphRun::sync() && {
  alive().wait();
  done_.reset();
}

bool GraphRun::ready() const {
  return alive().ready();
}

void GraphRun::release() noexcept {
  done_.reset();  // the outputs' storages keep the replay as their writer (graph.hpp)
}

size_t Graph::launches() const {
  return state_ ? state_->steps->size() : 0;
}

const std::string& Graph::label() const {
  static const std::string none = "an empty graph";
  return state_ ? *state_->label : none;
}

GraphRun Graph::replay(std::source_location l) const {
  const SourceLoc loc = l;
  if (!state_)
    fail_at<UsageError>(loc,
                        "replay() of an empty Graph (made by default, or moved from); replay "
                        "the graph that capture() returned");
  if (runtime::t_capture)
    fail_at<GraphError>(loc, "replay() of ", *state_->label, " inside the capture of ",
                        *runtime::t_capture->label,
                        ": a replay cannot be recorded into a graph; replay it before capture() "
                        "or after it");
  runtime::refuse_launch_if_an_error_was_lost();
  const State& g = *state_;
  std::unique_lock order(runtime::g_order_mu);
  if (g.steps->empty()) {
    order.unlock();
    auto done = std::make_shared<runtime::Completion>(g.label);
    done->finish();
    return GraphRun(std::move(done));
  }
  runtime::Predecessors before = runtime::PendingAccess::predecessors(g.uses);
  std::shared_ptr<runtime::Completion> done;
  if (g.device->is_cpu()) {
    done = std::make_shared<runtime::Completion>(g.label);
    done->follow(std::move(before.writers));
    // As a launch (launch.cpp): wait for the readers it follows, then the writers (whose failure
    // is this replay's), then run each captured launch in order; the first error ends the replay.
    runtime::cpu_enqueue([steps = g.steps, readers = std::move(before.readers), done] {
      for (const std::shared_ptr<runtime::Completion>& r : readers) r->wait_quietly();
      if (std::exception_ptr e = done->predecessor_error()) return done->finish(e);
      try {
        for (const State::Step& s : *steps) backend::cpu::run(s.kernel->fn, s.args);
        done->finish();
      } catch (...) {
        done->finish(std::current_exception());
      }
    });
  } else {
    std::vector<std::shared_ptr<runtime::Completion>> after = before.writers;
    after.insert(after.end(), before.readers.begin(), before.readers.end());
    done = runtime::gpu_graph_replay(g.gpu, g.label, runtime::current_stream(*g.device), after);
    done->follow(std::move(before.writers));
  }
  runtime::PendingAccess::record(g.uses, done);
  return GraphRun(std::move(done));
}

}  // namespace tessera

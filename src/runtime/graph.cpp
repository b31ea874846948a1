// Graphs (runtime/graph.hpp): recording launches while a thread captures, the graph's holds on
// the storages it uses (and the checks that keep them its own), and replays. A replay is one
// piece of work in the per-storage tracking (pending_access.hpp), a writer of every storage a
// captured launch writes and a reader of the rest: the CPU backend runs the recorded launches in
// order on a worker, a GPU launches the instantiated CUDA graph (gpu_graph.cpp).
#include "tessera/runtime/graph.hpp"

#include <algorithm>
#include <atomic>
#include <optional>
#include <unordered_map>

#include "tessera/backend/cpu/interpreter.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/stream.hpp"

#include "cpu_queue.hpp"
#include "gpu_graph.hpp"
#include "graph_capture.hpp"
#include "handle_internals.hpp"

namespace tessera {

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

namespace {

// One graph's hold on a storage.
struct Hold {
  const Graph::State* graph;
  bool written;
  std::string what;  // the tensor, as the first captured launch that used it saw it
};

// Which graphs hold which storage. Leaked on purpose: a graph held by a static may die after it.
struct Registry {
  std::mutex mu;
  std::unordered_map<const Storage*, std::vector<Hold>> holds;
};
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}
// How many storages some graph holds: every check returns at once while it is zero.
std::atomic<size_t> g_held{0};
// Taken by a replay, and by a launch that uses a held storage, from predecessors() to record().
std::mutex g_order_mu;
// The graph this thread captures into, if any.
thread_local Graph::State* t_capture = nullptr;

bool any_held() {
  return g_held.load(std::memory_order_acquire) != 0;
}

// The holds on `s` by graphs other than the one this thread captures. Under the registry's lock.
const Hold* foreign_hold(const Storage* s) {
  auto it = registry().holds.find(s);
  if (it == registry().holds.end()) return nullptr;
  for (const Hold& h : it->second)
    if (h.graph != t_capture) return &h;
  return nullptr;
}

const char* use_of(const Hold& h) {
  return h.written ? "writes" : "reads";
}

}  // namespace

bool capturing() noexcept {
  return t_capture != nullptr;
}

std::shared_ptr<const CaptureArgs> capture_arguments(const KernelSite& site,
                                                     const std::vector<LaunchArg>& args,
                                                     Device device, SourceLoc call) {
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
    c->names.push_back(detail::cat(
        "argument ", i + 1, " ('", names[i], "', ", a.kind == ir::ParamKind::Out ? "Out" : "In",
        ") of kernel '", site.name, "'",
        site.loc.known() ? " (defined at " + site.loc.str() + ")" : "", ", a ",
        dtype_name(a.tensor->dtype()), " tensor of shape ", to_string(a.tensor->shape())));
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

void graph_check_launch(const KernelSite& site, const std::vector<LaunchArg>& args,
                        SourceLoc call) {
  if (!any_held()) return;
  std::lock_guard lock(registry().mu);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != ir::ParamKind::Out || !args[i].tensor) continue;
    if (const Hold* h = foreign_hold(args[i].tensor->storage()))
      fail_at<GraphError>(call, "kernel '", site.name, "': argument ", i + 1,
                          " (Out) writes a tensor that ", *h->graph->label, " holds (", h->what,
                          "): the graph ", use_of(*h),
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

void refuse_in_capture(std::string_view what) {
  if (t_capture)
    fail<GraphError>("inside the capture of ", *t_capture->label, ": ", what,
                     " runs at once and cannot be recorded into a graph; do it before capture() "
                     "or after it");
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
    for (const Graph::State::Step& step : *s->steps) steps.push_back({step.gpu.get(), &step.args});
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

namespace {

// The largest power of two, up to 16, that divides `address`: what generated code may assume.
int alignment_of(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  int bytes = 16;
  while (bytes > 1 && a % static_cast<uintptr_t>(bytes) != 0) bytes /= 2;
  return bytes;
}

// The bytes [first, last) a tensor argument can touch.
std::pair<uintptr_t, uintptr_t> span_of(const backend::TensorArg& t) {
  const auto base = reinterpret_cast<uintptr_t>(t.data);
  int64_t lo = 0, hi = 0;
  if (numel(t.shape) == 0) return {base, base};
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const int64_t reach = (t.shape[d] - 1) * t.strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto size = static_cast<int64_t>(dtype_size(t.dtype));
  return {base + static_cast<uintptr_t>(lo * size), base + static_cast<uintptr_t>((hi + 1) * size)};
}

}  // namespace

void Graph::rebind_handle(const runtime::TensorHandle& captured,
                          const runtime::TensorHandle& replacement, SourceLoc loc) {
  using runtime::HandleInternals;
  using runtime::Storage;
  if (!state_)
    fail_at<UsageError>(loc,
                        "rebind() of an empty Graph (made by default, or moved from); rebind "
                        "the graph that capture() returned");
  if (runtime::t_capture)
    fail_at<GraphError>(loc, "rebind() of ", *state_->label, " inside the capture of ",
                        *runtime::t_capture->label, ": rebind it before capture() or after it");
  captured.check_alive(loc);
  replacement.check_alive(loc);
  State& g = *state_;
  const std::lock_guard rebinding(g.rebind_mu);
  const Storage* from = captured.storage();
  const Storage* to = replacement.storage();
  void* const from_data = HandleInternals::data(captured);
  void* const to_data = HandleInternals::data(replacement);

  // The uses of `captured`: arguments with its storage and its view.
  auto same_view = [&](const backend::TensorArg& t) {
    return t.data == from_data && t.dtype == captured.dtype() && t.shape == captured.shape() &&
           t.strides == captured.strides();
  };
  bool found = false, written = false;
  for (const State::Step& step : *g.steps) {
    size_t t = 0;
    for (size_t i = 0; i < step.args.args.size(); ++i) {
      if (step.kernel->fn.params[i].kind == ir::ParamKind::Scalar) continue;
      if (step.uses[t].first == from && same_view(step.args.args[i].tensor)) {
        found = true;
        written = written || step.uses[t].second;
      }
      ++t;
    }
  }
  if (!found)
    fail_at<GraphError>(
        loc, "rebind(): ", *g.label, " has no captured launch that uses this tensor (a ",
        dtype_name(captured.dtype()), " tensor of shape ", to_string(captured.shape()),
        "); pass the tensor (the same view) that a captured launch took");
  size_t index = 0;
  while (g.uses[index].storage != from) ++index;
  const std::string what = g.what[index];  // a copy: g.what changes below
  auto refuse = [&](auto&&... why) {
    fail_at<GraphError>(loc, "rebind() of a tensor that ", *g.label, " holds (", what,
                        "): the replacement ", why...);
  };
  if (replacement.dtype() != captured.dtype() || replacement.shape() != captured.shape() ||
      replacement.strides() != captured.strides())
    refuse("is a ", dtype_name(replacement.dtype()), " tensor of shape ",
           to_string(replacement.shape()), " and strides ", to_string(replacement.strides()),
           ", but a rebound tensor keeps the dtype, shape and strides the launches were compiled "
           "for (",
           to_string(captured.strides()), "); capture a graph for the new shape instead");
  if (replacement.device() != captured.device())
    refuse("is on ", replacement.device().str(), ", but the graph runs on ",
           captured.device().str(), "; move it with .to(device) first");
  if (alignment_of(to_data) < alignment_of(from_data))
    refuse("is aligned to ", alignment_of(to_data), " bytes, but the captured tensor to ",
           alignment_of(from_data),
           ", which the generated code may rely on; pass a tensor of its own (not an offset "
           "view), or capture again");
  if (to == from) return;  // the same view of the same storage: nothing changes
  if (std::any_of(g.uses.begin(), g.uses.end(),
                  [&](const runtime::StorageUse& u) { return u.storage == to; }))
    refuse(
        "is already used by the graph; rebinding one tensor to another of the same graph "
        "would make two of its arguments one");
  if (written && to->escaped())
    refuse(
        "had its address handed out by unchecked_data(), but the graph writes this tensor, "
        "and a raw pointer is a handle the checks cannot count; pass a copy, "
        "t.to(t.device())");
  if (written) {
    std::lock_guard lock(runtime::registry().mu);
    if (const runtime::Hold* h = runtime::foreign_hold(to))
      refuse("is held by ", *h->graph->label, " (", h->what,
             "), but this graph writes the tensor, and a tensor a graph holds is written by no "
             "one else; pass another tensor, or destroy that graph first");
  }

  // The new launches: the same, with `captured` replaced. Queued replays keep the old ones.
  auto steps = std::make_shared<std::vector<State::Step>>(*g.steps);
  backend::TensorArg replaced{to_data, replacement.dtype(), replacement.shape(),
                              replacement.strides()};
  for (State::Step& step : *steps) {
    size_t t = 0;
    for (size_t i = 0; i < step.args.args.size(); ++i) {
      if (step.kernel->fn.params[i].kind == ir::ParamKind::Scalar) continue;
      if (step.uses[t].first == from && same_view(step.args.args[i].tensor)) {
        step.args.args[i].tensor = replaced;
        step.uses[t].first = to;
      }
      ++t;
    }
  }
  // Memory reachable through two arguments of one launch, one of them written, would race.
  for (const State::Step& step : *steps)
    for (size_t i = 0; i < step.args.args.size(); ++i)
      for (size_t j = 0; j < step.args.args.size(); ++j) {
        if (i == j || step.kernel->fn.params[i].kind != ir::ParamKind::Out ||
            step.kernel->fn.params[j].kind == ir::ParamKind::Scalar)
          continue;
        const auto [lo, hi] = span_of(step.args.args[i].tensor);
        const auto [lo2, hi2] = span_of(step.args.args[j].tensor);
        if (lo < hi2 && lo2 < hi)
          refuse("overlaps in memory another argument of ", *step.label,
                 " that the graph writes or reads with it; an output may not be reachable "
                 "through another argument");
      }
  std::shared_ptr<runtime::GpuGraph> gpu;
  if (g.device->is_cuda()) {
    std::vector<runtime::GpuGraphStep> gpu_steps;
    for (const State::Step& step : *steps) gpu_steps.push_back({step.gpu.get(), &step.args});
    gpu = runtime::gpu_graph_build(*g.device, gpu_steps);
  }

  // Swapped in while no replay or launch on a held storage orders itself.
  std::shared_ptr<Storage> old_hold;  // let go after the locks
  std::lock_guard order(runtime::g_order_mu);
  std::lock_guard lock(runtime::registry().mu);
  g.steps = std::move(steps);
  if (gpu) g.gpu = std::move(gpu);
  const bool still_used = std::any_of(g.steps->begin(), g.steps->end(), [&](const State::Step& s) {
    return std::any_of(s.uses.begin(), s.uses.end(),
                       [&](const auto& u) { return u.first == from; });
  });
  auto& holds = runtime::registry().holds;
  if (!still_used) {  // another view of the storage may still be in use
    std::vector<runtime::Hold>& mine = holds[from];
    std::erase_if(mine, [&](const runtime::Hold& h) { return h.graph == &g; });
    if (mine.empty()) {
      holds.erase(from);
      runtime::g_held.fetch_sub(1, std::memory_order_acq_rel);
    }
    old_hold = std::move(g.held[index]);
    g.uses.erase(g.uses.begin() + static_cast<std::ptrdiff_t>(index));
    g.held.erase(g.held.begin() + static_cast<std::ptrdiff_t>(index));
    g.what.erase(g.what.begin() + static_cast<std::ptrdiff_t>(index));
  }
  std::vector<runtime::Hold>& theirs = holds[to];
  if (theirs.empty()) runtime::g_held.fetch_add(1, std::memory_order_acq_rel);
  theirs.push_back({&g, written, what});
  g.uses.push_back({to, written});
  g.held.push_back(HandleInternals::storage(replacement));
  g.what.push_back(what);
}

namespace {

// Binds the value to an argument of type T as a launch does (kernel.hpp's describe_argument); how
// binding it would change it, if it would.
template <class T>
Narrowing bind_as(backend::ArgValue& arg, bool integral, int64_t ivalue, double value) {
  const Narrowing n = integral ? narrowing<T>(ivalue) : narrowing<T>(value);
  if (n != Narrowing::None) return n;
  T v{};
  if constexpr (detail::is_float16<T>)
    v = T(static_cast<float>(integral ? static_cast<double>(ivalue) : value));
  else
    v = integral ? static_cast<T>(ivalue) : static_cast<T>(value);
  if constexpr (std::is_integral_v<T>)
    arg.iscalar = static_cast<int64_t>(v);
  else
    arg.scalar = detail::as_double(v);
  return Narrowing::None;
}

Narrowing bind_scalar(backend::ArgValue& arg, DType dtype, bool integral, int64_t ivalue,
                      double value) {
  switch (dtype) {
    case DType::Bool:
      return bind_as<bool>(arg, integral, ivalue, value);
    case DType::I8:
      return bind_as<int8_t>(arg, integral, ivalue, value);
    case DType::I16:
      return bind_as<int16_t>(arg, integral, ivalue, value);
    case DType::I32:
      return bind_as<int32_t>(arg, integral, ivalue, value);
    case DType::I64:
      return bind_as<int64_t>(arg, integral, ivalue, value);
    case DType::U8:
      return bind_as<uint8_t>(arg, integral, ivalue, value);
    case DType::F16:
      return bind_as<half>(arg, integral, ivalue, value);
    case DType::BF16:
      return bind_as<bfloat16>(arg, integral, ivalue, value);
    case DType::F32:
      return bind_as<float>(arg, integral, ivalue, value);
    case DType::F64:
      return bind_as<double>(arg, integral, ivalue, value);
  }
  TESSERA_INTERNAL_CHECK(false, "unknown dtype");
}

}  // namespace

void Graph::rebind_scalar(std::string_view kernel, std::string_view param, bool integral,
                          int64_t ivalue, double value, const std::string& text, SourceLoc loc) {
  if (!state_)
    fail_at<UsageError>(loc,
                        "rebind() of an empty Graph (made by default, or moved from); rebind "
                        "the graph that capture() returned");
  if (runtime::t_capture)
    fail_at<GraphError>(loc, "rebind() of ", *state_->label, " inside the capture of ",
                        *runtime::t_capture->label, ": rebind it before capture() or after it");
  State& g = *state_;
  const std::lock_guard rebinding(g.rebind_mu);
  auto steps = std::make_shared<std::vector<State::Step>>(*g.steps);
  bool found = false;
  for (State::Step& step : *steps) {
    if (step.kernel->fn.name != kernel) continue;
    const std::vector<ir::Param>& params = step.kernel->fn.params;
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].kind != ir::ParamKind::Scalar || params[i].name != param) continue;
      found = true;
      if (const Narrowing n =
              bind_scalar(step.args.args[i], params[i].dtype, integral, ivalue, value);
          n != Narrowing::None)
        fail_at<LaunchError>(loc, "rebind() of ", *g.label, ": scalar '", param, "' of kernel '",
                             kernel, "' would be ", text, ", which ",
                             narrowing_reason(n, params[i].dtype),
                             "; binding it would change its value; pass a value that fits");
    }
  }
  if (!found)
    fail_at<GraphError>(loc, "rebind(): ", *g.label, " has no captured launch of kernel '", kernel,
                        "' with a scalar parameter '", param,
                        "'; name a kernel the graph launches, and one of its Scalar parameters");
  std::shared_ptr<runtime::GpuGraph> gpu;
  if (g.device->is_cuda()) {
    std::vector<runtime::GpuGraphStep> gpu_steps;
    for (const State::Step& step : *steps) gpu_steps.push_back({step.gpu.get(), &step.args});
    gpu = runtime::gpu_graph_build(*g.device, gpu_steps);
  }
  std::lock_guard order(runtime::g_order_mu);  // no replay reads the launches meanwhile
  g.steps = std::move(steps);
  if (gpu) g.gpu = std::move(gpu);
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

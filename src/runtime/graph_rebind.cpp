// Rebinding a graph (runtime/graph.hpp): a captured tensor or scalar replaced for later replays,
// with the checks that keep the compiled launches valid and the graph's holds its own. The
// launches are copied, changed and swapped in (replays already queued keep the old ones); on a
// GPU the instantiated CUDA graph is updated in place from the new launches (cuGraphExecUpdate), or
// built again where the driver refuses that.
#include <algorithm>
#include <cstdint>

#include "tessera/core/narrowing.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/graph.hpp"

#include "gpu_graph.hpp"
#include "graph_state.hpp"
#include "handle_internals.hpp"

namespace tessera {

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

// On a GPU, makes `gpu` replay `steps` (a graph's launches, rebound): the instantiated graph
// updated in place where the driver allows it, else a new one built (replays queued before keep the
// old one either way). Called under g_order_mu, before anything else of g changes: if it throws,
// the graph replays as before.
template <class Steps>
void rebuild_gpu(Device device, std::shared_ptr<runtime::GpuGraph>& gpu, const Steps& steps) {
  if (!device.is_cuda()) return;
  std::vector<runtime::GpuGraphStep> gpu_steps;
  for (const auto& step : steps) gpu_steps.push_back(runtime::gpu_graph_step(step));
  if (gpu && runtime::gpu_graph_update(*gpu, gpu_steps)) return;
  gpu = runtime::gpu_graph_build(device, gpu_steps);
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
        if (i == j ||
            (step.kernel->fn.params[i].kind != ir::ParamKind::Out &&
             step.kernel->fn.params[i].kind != ir::ParamKind::Accum) ||
            step.kernel->fn.params[j].kind == ir::ParamKind::Scalar)
          continue;
        const auto [lo, hi] = span_of(step.args.args[i].tensor);
        const auto [lo2, hi2] = span_of(step.args.args[j].tensor);
        if (lo < hi2 && lo2 < hi)
          refuse("overlaps in memory another argument of ", *step.label,
                 " that the graph writes or reads with it; an output may not be reachable "
                 "through another argument");
      }
  // Swapped in while no replay or launch on a held storage orders itself.
  std::shared_ptr<Storage> old_hold;  // let go after the locks
  std::lock_guard order(runtime::g_order_mu);
  rebuild_gpu(*g.device, g.gpu, *steps);
  std::lock_guard lock(runtime::registry().mu);
  g.steps = std::move(steps);
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
  if constexpr (detail::is_narrow_float<T>)
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
    case DType::F8E4M3:
      return bind_as<float8_e4m3>(arg, integral, ivalue, value);
    case DType::F8E5M2:
      return bind_as<float8_e5m2>(arg, integral, ivalue, value);
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
  std::lock_guard order(runtime::g_order_mu);  // no replay reads the launches meanwhile
  rebuild_gpu(*g.device, g.gpu, *steps);
  g.steps = std::move(steps);
}

}  // namespace tessera

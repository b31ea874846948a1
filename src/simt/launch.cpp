// The non-template core of SIMT launches: binding tensors, the overlap check, relation failures,
// and handing the launch to the driver bridge.
#include "tessera/simt/launch.hpp"

#include "tessera/core/error.hpp"
#include "tessera/runtime/stream.hpp"

#include "../runtime/graph_capture.hpp"
#include "../runtime/handle_internals.hpp"

namespace tessera::simt::detail {

using runtime::HandleInternals;

namespace {

std::string param_text(const LaunchTarget& t, int position) {
  if (position >= 0 && position < static_cast<int>(t.params.size()))
    return "'" + t.params[position] + "'";
  return tessera::detail::cat("#", position);
}

}  // namespace

std::vector<std::string> param_names(std::string_view params) {
  std::vector<std::string> names;
  for (int i = 0;; ++i) {
    const std::string_view n = param_name(params, i);
    if (n.empty()) return names;
    names.emplace_back(n);
  }
}

void* bind_tensor(const LaunchTarget& t, int position, const runtime::TensorHandle& h,
                  int span_rank, bool written, ArgFacts& facts, ArgRange& range) {
  const std::string p = param_text(t, position);
  // A SIMT launch runs at once: inside capture() it would run once, never at a replay.
  if (runtime::capturing())
    runtime::refuse_in_capture(tessera::detail::cat("a SIMT launch of kernel '", t.kernel, "'"));
  if (h.empty())
    fail<OwnershipError>("kernel '", t.kernel, "': the tensor passed for parameter ", p,
                         " was moved from; pass a tensor that holds its storage.");
  // The tile path's rule for what a launch writes (check_partition): no other handle -- a copy, a
  // view, a pending launch's input -- may reach the storage while the kernel writes it.
  if (written && h.use_count() > 1)
    fail<OwnershipError>("kernel '", t.kernel, "': output ", p,
                         " needs the only handle to its tensor's storage, but ", h.use_count(),
                         " handles share it (copies, views, or launches still reading it); drop "
                         "the other handles, or sync the launches, first.");
  // A raw pointer from unchecked_data() is a handle the use count cannot see.
  if (written && h.storage()->escaped())
    fail<OwnershipError>("kernel '", t.kernel, "': output ", p,
                         " needs the only handle to its tensor's storage, but its address was "
                         "handed out by unchecked_data(), and a raw pointer is a handle the "
                         "checks cannot count; kernels may read this tensor but not write it: "
                         "pass a copy instead, t.to(t.device()).");
  // SIMT launches go to the device's own stream and are not in the storage tracking: the stream
  // waits, on the device, for the tile launches on other streams that this argument must follow.
  runtime::order_device_stream_after_pending(h, written);
  if (span_rank == 2) {
    if (h.rank() != 2)
      fail<UsageError>("kernel '", t.kernel, "': parameter ", p,
                       " is a 2-D span, but the tensor "
                       "passed for it has rank ",
                       h.rank(), " (shape ", to_string(h.shape()), "); pass a rank-2 tensor.");
    if (h.shape()[1] > 1 && h.strides()[1] != 1)
      fail<UsageError>("kernel '", t.kernel, "': parameter ", p,
                       " is a 2-D span, whose rows "
                       "must be contiguous, but the tensor passed for it has a column stride of ",
                       h.strides()[1], "; pass a tensor whose last axis has stride 1.");
    if (h.shape()[0] > 1 && h.strides()[0] < h.shape()[1])
      fail<UsageError>("kernel '", t.kernel, "': parameter ", p,
                       " is a 2-D span, but the tensor "
                       "passed for it has a row stride (",
                       h.strides()[0], ") smaller than its row length (", h.shape()[1],
                       "); pass a row-major tensor.");
    facts.rows = h.shape()[0];
    facts.cols = h.shape()[1];
    facts.size = h.numel();
  } else {
    if (!h.contiguous())
      fail<UsageError>("kernel '", t.kernel, "': parameter ", p,
                       " needs contiguous elements, "
                       "but the tensor passed for it (shape ",
                       to_string(h.shape()), ") is a strided view; pass a contiguous tensor.");
    facts.size = h.numel();
  }
  range.tensor = true;
  range.written = written;
  const auto [lo, hi] = h.byte_range();
  range.lo = lo;
  range.hi = hi;
  range.device = h.device();
  return HandleInternals::data(h);
}

void check_ranges(const LaunchTarget& t, const ArgRange* ranges, int count) {
  const int offset = static_cast<int>(t.params.size()) - count;  // the witness, when there is one
  for (int i = 0; i < count; ++i) {
    const ArgRange& a = ranges[i];
    if (!a.tensor) continue;
    if (a.device != t.device)
      fail<UsageError>("kernel '", t.kernel, "': the tensor passed for parameter ",
                       param_text(t, i + offset), " is on ", a.device.str(),
                       ", but the kernel runs on ", t.device.str(), "; make the tensor on ",
                       t.device.str(), ".");
  }
  for (int i = 0; i < count; ++i) {
    const ArgRange& a = ranges[i];
    if (!a.tensor || !a.written || a.lo == a.hi) continue;
    for (int j = 0; j < count; ++j) {
      const ArgRange& b = ranges[j];
      if (j == i || !b.tensor || b.lo == b.hi) continue;
      if (b.written && j < i) continue;  // that pair was reported from j's side
      if (a.lo < b.hi && b.lo < a.hi)
        fail<OwnershipError>(
            "kernel '", t.kernel, "': output ", param_text(t, i + offset), " overlaps ",
            b.written ? "output " : "input ", param_text(t, j + offset),
            " (their memory shares bytes), so one thread's write could be another thread's "
            "read or write; pass tensors with separate storage (copy one of them).");
    }
  }
}

void fail_relation(const LaunchTarget& t, const std::string& text, const std::string& lhs_text,
                   const std::string& rhs_text, const RelationOutcome& o,
                   const Overflow& overflow) {
  if (overflow.happened && overflow.unfit)
    fail<LaunchError>("kernel '", t.kernel, "': the size relation `", text,
                      "` of its contract cannot be checked: ", overflow.expression, " is ",
                      overflow.unfit_value,
                      ", past the 64-bit signed range that size relations compute in; pass a "
                      "value below 2^63.");
  if (overflow.happened)
    fail<LaunchError>("kernel '", t.kernel, "': the size relation `", text,
                      "` of its contract cannot be checked: ", overflow.expression,
                      " overflows 64 bits (", overflow.a, " ", overflow.op, " ", overflow.b,
                      "); the arguments are too large for this kernel.");
  std::string values;
  if (!lhs_text.empty()) values += tessera::detail::cat(lhs_text, " is ", o.lhs);
  if (!rhs_text.empty())
    values += tessera::detail::cat(values.empty() ? "" : " and ", rhs_text, " is ", o.rhs);
  fail<LaunchError>("kernel '", t.kernel, "': the arguments break the size relation `", text,
                    "` of its contract: ", values, "; pass arguments that satisfy it.");
}

LaunchTarget resolve(const Module& module, std::string_view kernel, std::string_view params,
                     const SignatureRecord& signature) {
  const FunctionInfo& f = module.function(kernel);
  check_signature(kernel, params, signature, f);
  LaunchTarget t;
  t.kernel = std::string(kernel);
  t.params = param_names(params);
  t.ordinal = module.ordinal();
  t.device = module.device();
  t.function = f.function;
  return t;
}

void reserve_shared(const LaunchTarget& t) {
  if (t.geometry.dynamic_shared_bytes > 48 * 1024)
    driver_bridge().allow_dynamic_shared(t.ordinal, t.function, t.geometry.dynamic_shared_bytes);
}

std::shared_ptr<runtime::Completion> run(const LaunchTarget& t, const void* pack, size_t bytes) {
  std::unique_ptr<runtime::DeviceWork> work;
  if (!t.geometry.empty()) {
    LaunchRequest r;
    r.kernel = t.kernel;
    r.ordinal = t.ordinal;
    r.function = t.function;
    for (int a = 0; a < 3; ++a) {
      r.grid[a] = static_cast<unsigned>(t.geometry.grid[a]);
      r.block[a] = static_cast<unsigned>(t.geometry.block[a]);
    }
    r.dynamic_shared_bytes = static_cast<size_t>(t.geometry.dynamic_shared_bytes);
    r.args = pack;
    r.args_bytes = bytes;
    work = driver_bridge().launch(r);
  }
  // The label names the launch in an error its Future is dropped with (runtime/future.hpp).
  if (work)
    return std::make_shared<runtime::Completion>(std::move(work), "SIMT kernel '" + t.kernel + "'");
  auto done = std::make_shared<runtime::Completion>();
  done->finish();
  return done;
}

}  // namespace tessera::simt::detail

#include "tessera/runtime/launch.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "tessera/backend/backend.hpp"
#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/env.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/launch_profile.hpp"
#include "tessera/runtime/stream.hpp"
#include "tessera/tile/trace_check.hpp"

#include "block_pool.hpp"
#include "compile_pipeline.hpp"
#include "graph_capture.hpp"
#include "handle_internals.hpp"
#include "ir_cache.hpp"
#include "pending_access.hpp"
#include "phase_clock.hpp"

namespace tessera::runtime {

// ---- Completion ------------------------------------------------------------------------------

const std::string& Completion::label() const {
  static const std::string none;
  return label_ ? *label_ : none;
}

void Completion::mark_done(std::exception_ptr error) const {
  // The predecessors are released outside the lock, and before the waiters are woken: a thread
  // that waited for this launch then finds their blocks back in the pools (block_pool.hpp).
  std::array<std::shared_ptr<Completion>, kInlineWriters> writers;
  std::vector<std::shared_ptr<Completion>> more_writers;
  const State outcome = error ? kFailed : kSucceeded;
  {
    std::lock_guard lock(mu_);
    if (done_) return;
    done_ = true;
    ending_.store(true, std::memory_order_release);
    error_ = std::move(error);
    writers.swap(writers_);
    more_writers.swap(more_writers_);
    writer_count_.store(0, std::memory_order_relaxed);
  }
  for (std::shared_ptr<Completion>& w : writers) w.reset();
  more_writers.clear();
  // Published last: a waiter that returns on the fast path finds the predecessors' blocks back
  // in the pools, and error_ final.
  state_.store(outcome, std::memory_order_release);
  cv_.notify_all();
}

void Completion::follow(std::span<const std::shared_ptr<Completion>> writers) {
  std::lock_guard lock(mu_);
  const size_t inline_count = std::min(writers.size(), kInlineWriters);
  std::copy(writers.begin(), writers.begin() + static_cast<std::ptrdiff_t>(inline_count),
            writers_.begin());
  more_writers_.assign(writers.begin() + static_cast<std::ptrdiff_t>(inline_count), writers.end());
  writer_count_.store(writers.size(), std::memory_order_relaxed);
}

std::exception_ptr Completion::predecessor_error() const noexcept {
  // Copied out of the lock (each is waited for): on the stack for the usual few, so that a wait
  // allocates nothing.
  std::array<std::shared_ptr<Completion>, kInlineWriters> inline_writers;
  std::vector<std::shared_ptr<Completion>> more_writers;
  size_t count = 0;
  if (writer_count_.load(std::memory_order_relaxed) == 0) return nullptr;  // none: no lock
  try {
    std::lock_guard lock(mu_);
    count = writer_count_.load(std::memory_order_relaxed);
    inline_writers = writers_;
    more_writers = more_writers_;
  } catch (...) {
    return std::current_exception();
  }
  for (size_t i = 0; i < count; ++i) {
    const std::shared_ptr<Completion>& w =
        i < kInlineWriters ? inline_writers[i] : more_writers[i - kInlineWriters];
    try {
      w->wait();
    } catch (const std::exception& e) {
      try {
        fail<LaunchError>(label().empty() ? "a launch" : label(), " was ordered after a launch of ",
                          w->label().empty() ? "a kernel" : w->label(),
                          " that writes memory it reads or writes, and that launch failed, so "
                          "this one's results hold nothing valid: \"",
                          e.what(),
                          "\". Fix the first launch, or wait() for it before launching work "
                          "that uses its results");
      } catch (...) {
        return std::current_exception();
      }
    } catch (...) {
      return std::current_exception();
    }
  }
  return nullptr;
}

void Completion::settle(bool block) const {
  // No lock. Once mark_done() has set done_ (ending_), nothing more is asked: the callers then
  // take the lock and find done_, in the moment before the outcome is published too. (Waiters
  // that arrive together before it may each look once; the first mark_done() wins.)
  if (state() != kPending || ending_.load(std::memory_order_acquire)) return;
  // Outside the lock: waiting for the device may take long, and other threads may ask meanwhile.
  try {
    // Once the work is done, wait() is cheap, and it is where the work's own errors (a GPU
    // kernel's error report) are collected: a poll must not skip them.
    if (!block && !work_->done()) return;
    work_->wait();
    mark_done(predecessor_error());
  } catch (...) {
    mark_done(std::current_exception());
  }
}

bool Completion::ready() const {
  if (state() != kPending) return true;
  if (work_) settle(false);
  std::lock_guard lock(mu_);
  return done_;
}

bool Completion::finished() const noexcept {
  if (state() != kPending) return true;
  try {
    {
      std::lock_guard lock(mu_);
      if (done_) return true;
    }
    return work_ && work_->done();
  } catch (...) {  // the query failed (a fault): finished, and wait() will say how
    return true;
  }
}

void Completion::order_on(void* stream) const {
  // The work decides whether to ask the device: a launch on `stream` itself needs no question.
  if (work_ && !known_done()) work_->order_on(stream);
}

// The three below read only the published state: "not known" in the moment between done_ and
// its publication, which their callers take as "maybe still running" (an order kept, a reader
// kept), never as done.
bool Completion::known_succeeded() const {
  return state() == kSucceeded;
}

bool Completion::known_done() const {
  return state() != kPending;
}

bool Completion::known_failed() const {
  return state() == kFailed;
}

void Completion::wait() const {
  // Known to have succeeded: no lock, no question to the device (the fast path of every sync()
  // of a finished launch). A failure takes the lock below, to mark its error seen.
  const State s = state();
  if (s == kSucceeded) return;
  if (work_ && s == kPending) {
    settle(true);
    if (state() == kSucceeded) return;  // this settle published it: no lock either
  }
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  if (error_) {
    seen_ = true;
    std::rethrow_exception(error_);
  }
}

void Completion::wait_quietly() const noexcept {
  if (state() != kPending) return;
  try {
    if (work_) settle(true);
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_; });
  } catch (...) {  // a broken mutex: nothing to wait with
  }
}

std::exception_ptr Completion::unseen_error() const noexcept {
  if (state() == kSucceeded) return nullptr;
  try {
    if (work_) settle(true);  // settle() keeps the work's error; it throws nothing of its own
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return done_; });
    if (!error_ || seen_) return nullptr;
    seen_ = true;
    return error_;
  } catch (...) {  // the wait itself failed (a broken mutex): that is the error to keep
    return std::current_exception();
  }
}

// ---- parameter names -------------------------------------------------------------------------

std::vector<std::string> parameter_names(const char* param_text, size_t count) {
  std::vector<std::string> names;
  const std::string text = param_text ? param_text : "";
  int depth = 0;
  size_t start = 0;
  auto take = [&](size_t end) {
    // The name is the last identifier of the declaration.
    size_t e = end;
    while (e > start &&
           !(std::isalnum(static_cast<unsigned char>(text[e - 1])) || text[e - 1] == '_'))
      --e;
    size_t b = e;
    while (b > start &&
           (std::isalnum(static_cast<unsigned char>(text[b - 1])) || text[b - 1] == '_'))
      --b;
    names.push_back(text.substr(b, e - b));
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<' || c == '(')
      ++depth;
    else if (c == '>' || c == ')')
      --depth;
    else if (c == ',' && depth == 0) {
      take(i);
      start = i + 1;
    }
  }
  if (!text.empty()) take(text.size());
  for (size_t i = 0; i < count; ++i)
    if (i >= names.size() || names[i].empty()) {
      if (i >= names.size()) names.emplace_back();
      names[i] = "arg" + std::to_string(i);
    }
  names.resize(count);
  return names;
}

// ---- launch ----------------------------------------------------------------------------------

namespace {

std::string describe(const std::vector<std::string>& names, size_t i, ir::ParamKind k) {
  return detail::cat("argument ", i + 1, " ('", names[i], "', ",
                     k == ir::ParamKind::Out     ? "Out"
                     : k == ir::ParamKind::In    ? "In"
                     : k == ir::ParamKind::Accum ? "Accum"
                                                 : "Scalar",
                     ")");
}

// A specialization, compiled: its IR and, on a GPU, the kernel loaded there.
struct Specialization {
  std::shared_ptr<const std::string> label;  // "kernel 'add' (defined at add.cpp:12:1)"
  // As traced; kept only where TESSERA_CHECK=trace was set when it was compiled, for each later
  // launch's trace to be compared with.
  std::shared_ptr<const ir::Function> traced;
  std::shared_ptr<const CompiledKernel> kernel;
  std::shared_ptr<const GpuKernel> gpu;
};

// One entry per key, made on first use. The cache's lock is held only to find or add an entry;
// the entry's own lock is held while its specialization is traced and compiled, so a cold
// compile (an NVRTC run may take seconds) stalls only the launches that need that
// specialization, never the launches of other kernels, on any thread.
struct CacheEntry {
  std::mutex mu;
  // spec is built (and never changes again); a failed build leaves it unset, to be tried again.
  std::atomic<bool> ready{false};
  Specialization spec;
};
// Found by a string_view of the key: a lookup makes no string.
struct KeyHash {
  using is_transparent = void;
  size_t operator()(std::string_view k) const noexcept { return std::hash<std::string_view>{}(k); }
};
struct SpecializationCache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<CacheEntry>, KeyHash, std::equal_to<>> entries;
};
SpecializationCache& cache() {
  static SpecializationCache c;
  return c;
}

// This thread's last few lookups: a kernel launched again finds its entry without the cache's
// lock or a hash of its key. Entries are never removed from the cache, so a remembered one stays
// valid.
struct RecentEntry {
  std::string key;
  std::shared_ptr<CacheEntry> entry;
};
constexpr size_t kRecentEntries = 4;
thread_local std::array<RecentEntry, kRecentEntries> t_recent;
thread_local size_t t_recent_next = 0;

// A raw pointer: entries live as long as the cache (no reference count changes per launch).
CacheEntry* recent_entry(std::string_view key) {
  for (const RecentEntry& r : t_recent)
    if (r.entry && r.key == key) return r.entry.get();
  return nullptr;
}
void remember_entry(std::string_view key, const std::shared_ptr<CacheEntry>& entry) {
  RecentEntry& r = t_recent[t_recent_next++ % kRecentEntries];
  r.key.assign(key);
  r.entry = entry;
}

// What generated GPU code may assume about a tensor: contiguity of the innermost axis, and the
// widest access (16, 8, 4, 2 or 1 bytes) that its base address and row starts allow.
backend::cuda::TensorSpec tensor_spec(const TensorHandle& t) {
  backend::cuda::TensorSpec spec;
  const Shape& strides = t.strides();
  spec.inner_unit_stride = t.rank() == 0 || strides.back() == 1 || t.shape().back() == 1;
  const auto es = static_cast<int64_t>(dtype_size(t.dtype()));
  const uintptr_t address = t.address();
  int bytes = 16;
  auto fits = [&](int b) {
    if (address % static_cast<uintptr_t>(b) != 0) return false;
    for (size_t d = 0; d + 1 < strides.size(); ++d)
      if ((strides[d] * es) % b != 0) return false;
    return true;
  };
  while (bytes > 1 && !fits(bytes)) bytes /= 2;
  spec.vector_bytes = bytes;
  spec.inner_extent_aligned =
      t.rank() > 0 && spec.inner_unit_stride && (t.shape().back() * es) % bytes == 0;
  return spec;
}

// The specialization key's fields, each handed to `field` as a trivially copyable value. One
// list, walked twice by specialization_key (to size the key, then to fill it), so the two walks
// cannot disagree. Each field has a fixed size, except the tile shape, preceded by its length.
template <class Field>
void key_fields(Field&& field, const KernelSite& site, std::span<const LaunchArg> args,
                Device device, const std::vector<backend::cuda::TensorSpec>& tensor_specs) {
  field(site.identity);
  field(device.is_cuda());
  field(device.index());
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg& a = args[i];
    field(a.kind);
    field(a.dtype);
    if (a.tensor) field(a.tensor->rank());
    if (a.kind == ir::ParamKind::Out || a.kind == ir::ParamKind::Accum) {
      field(a.tile.size());
      if (a.kind == ir::ParamKind::Out)  // an Accum's grid extents are run-time values
        for (int64_t e : a.tile) field(e);
    }
    if (!tensor_specs.empty() && a.tensor) {
      field(tensor_specs[i].inner_unit_stride);
      field(tensor_specs[i].vector_bytes);
      field(tensor_specs[i].inner_extent_aligned);
    }
  }
}

// The specialization's key, as raw bytes: it is built on every launch, so nothing is formatted,
// and it is sized once and filled in place (fixed-size copies, no append), in `key`, whose
// capacity is reused from launch to launch.
void specialization_key(std::string& key, const KernelSite& site, std::span<const LaunchArg> args,
                        Device device, const std::vector<backend::cuda::TensorSpec>& tensor_specs) {
  size_t bytes = 0;
  key_fields([&](const auto& v) { bytes += sizeof v; }, site, args, device, tensor_specs);
  key.resize(bytes);
  char* at = key.data();
  key_fields(
      [&](const auto& v) {
        static_assert(std::is_trivially_copyable_v<std::remove_cvref_t<decltype(v)>>);
        std::memcpy(at, &v, sizeof v);  // a fixed size: a move or two, no call
        at += sizeof v;
      },
      site, args, device, tensor_specs);
}

}  // namespace

CheckedLaunch check_launch(const KernelSite& site, std::span<const LaunchArg> args,
                           const TraceFn& trace, SourceLoc call) {
  PhaseClock clock;
  // Names are parsed only when needed: for errors and for tracing.
  std::vector<std::string> names_storage;
  auto names = [&]() -> const std::vector<std::string>& {
    if (names_storage.empty()) names_storage = parameter_names(site.param_text, args.size());
    return names_storage;
  };
  auto fail_launch = [&](auto&&... parts) {
    fail_at<LaunchError>(call, "kernel '", site.name, "': ", parts...);
  };

  // Every tensor is alive, has the declared rank, and lives on one device.
  std::optional<Device> device;
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg& a = args[i];
    if (!a.tensor) continue;
    if (a.tensor->empty())
      fail_at<OwnershipError>(call, "kernel '", site.name, "': ", describe(names(), i, a.kind),
                              " is a moved-from tensor; use the handle that the operation it "
                              "was moved into returned");
    if (a.declared_rank != kDynamicRank && a.tensor->rank() != a.declared_rank)
      fail_launch(describe(names(), i, a.kind), " has rank ", a.tensor->rank(),
                  ", but the kernel declares rank ", a.declared_rank);
    if (!device)
      device = a.tensor->device();
    else if (*device != a.tensor->device())
      fail_launch(describe(names(), i, a.kind), " is on ", a.tensor->device().str(),
                  " but earlier arguments are on ", device->str(),
                  "; move it with .to(device) first");
  }

  // An output is a partition's handle (its only one), never a handle made into an output by hand.
  auto written = [](ir::ParamKind k) {
    return k == ir::ParamKind::Out || k == ir::ParamKind::Accum;
  };
  for (size_t i = 0; i < args.size(); ++i)
    if (written(args[i].kind) && !args[i].partitioned.marks(args[i].tensor))
      fail_at<OwnershipError>(call, "kernel '", site.name,
                              "': ", describe(names(), i, args[i].kind),
                              " is not a partition's handle; an output is written tile by tile "
                              "only through a partition, std::move(t).partition(tile), which "
                              "needs the only handle to its storage");

  // The grid comes from the Out partitions, which must agree.
  Shape grid;
  std::optional<size_t> first_out;
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg& a = args[i];
    if (a.kind != ir::ParamKind::Out) continue;
    Shape g;
    for (size_t d = 0; d < a.tile.size(); ++d)
      g.push_back(ceil_div(a.tensor->shape()[d], a.tile[d]));
    if (!first_out) {
      first_out = i;
      grid = std::move(g);
    } else if (g != grid) {
      fail_launch(describe(names(), i, a.kind), " is cut into a grid of ", to_string(g),
                  " tiles, but ", describe(names(), *first_out, ir::ParamKind::Out), " into ",
                  to_string(grid), "; the outputs of one launch share its grid");
    }
  }
  // An Accum's declared grid is the grid when no Out defines one, and agrees with it otherwise.
  std::optional<size_t> grid_from = first_out;
  for (size_t i = 0; i < args.size(); ++i) {
    const LaunchArg& a = args[i];
    if (a.kind != ir::ParamKind::Accum || a.tile.empty()) continue;
    if (!grid_from) {
      grid_from = i;
      grid.assign(a.tile.begin(), a.tile.end());
    } else if (!std::ranges::equal(a.tile, grid)) {
      fail_launch(describe(names(), i, a.kind), " declares a grid of ",
                  to_string(Shape(a.tile.begin(), a.tile.end())), " blocks, but ",
                  describe(names(), *grid_from, args[*grid_from].kind),
                  first_out ? " is cut into " : " declares ", to_string(grid),
                  "; the arguments of one launch share its grid (accumulate() with no grid "
                  "follows the Out partitions')");
    }
  }
  if (!grid_from) {
    const bool accumulates = std::any_of(args.begin(), args.end(), [](const LaunchArg& a) {
      return a.kind == ir::ParamKind::Accum;
    });
    if (!accumulates)
      fail_launch(
          "it has no Out parameter; the launch grid comes from the partitions of its "
          "outputs, so a kernel needs at least one");
    fail_launch(
        "it has no Out parameter and no Accum that declares a grid; the launch grid comes "
        "from the partitions of its outputs, or from std::move(t).accumulate(grid), so a "
        "kernel needs one of them");
  }

  // An output's memory is reachable through no other argument.
  for (size_t i = 0; i < args.size(); ++i) {
    if (!written(args[i].kind)) continue;
    const auto [lo, hi] = args[i].tensor->byte_range();
    for (size_t j = 0; j < args.size(); ++j) {
      if (j == i || !args[j].tensor) continue;
      const auto [lo2, hi2] = args[j].tensor->byte_range();
      if (lo < hi2 && lo2 < hi)
        fail_at<OwnershipError>(call, "kernel '", site.name,
                                "': ", describe(names(), i, args[i].kind), " overlaps ",
                                describe(names(), j, args[j].kind),
                                " in memory; an output may not be reachable through another "
                                "argument, or tiles would race with reads of it");
    }
  }

  // An output a graph holds is written only by that graph (runtime/graph.hpp).
  graph_check_launch(site, args, call);
  clock.mark(&LaunchProfile::checks_ns);

  // The specialization: traced and compiled once per key. On a GPU the key also holds each
  // tensor's alignment class, which the generated code relies on.
  // This thread's, reused: no heap allocation once they have grown.
  thread_local std::vector<backend::cuda::TensorSpec> tensor_specs;
  thread_local std::string key;
  tensor_specs.clear();
  const backend::Backend& device_backend = backend::backend_for(device->kind(), call);
  if (device_backend.specializes_on_tensors()) {
    tensor_specs.resize(args.size());
    for (size_t i = 0; i < args.size(); ++i)
      if (args[i].tensor) tensor_specs[i] = tensor_spec(*args[i].tensor);
  }
  // The cache entry's own specialization, read in place: a built entry never changes again, and
  // entries are never removed, so no copy (and no reference count change) per launch.
  const Specialization* spec = nullptr;
  {
    specialization_key(key, site, args, *device, tensor_specs);
    CacheEntry* entry = recent_entry(key);
    if (!entry) {
      SpecializationCache& c = cache();
      std::shared_ptr<CacheEntry> found;
      {
        std::lock_guard lock(c.mu);
        auto it = c.entries.find(std::string_view(key));
        if (it == c.entries.end())
          it = c.entries.emplace(key, std::make_shared<CacheEntry>()).first;
        found = it->second;
      }
      remember_entry(key, found);
      entry = found.get();
    }
    auto params = [&] {
      std::vector<ir::Param> ps;
      for (size_t i = 0; i < args.size(); ++i) {
        const LaunchArg& a = args[i];
        const bool accum = a.kind == ir::ParamKind::Accum;
        ps.push_back(ir::Param{names()[i], a.kind, a.dtype, a.tensor ? a.tensor->rank() : 0,
                               accum ? Shape{} : Shape(a.tile.begin(), a.tile.end()),
                               accum ? static_cast<int>(a.tile.size()) : 0});
      }
      return ps;
    };
    // A built entry never changes again: read without its lock (ready is set after spec, with
    // release order).
    bool cached = entry->ready.load(std::memory_order_acquire);
    if (cached) spec = &entry->spec;
    if (!cached) {
      std::lock_guard lock(entry->mu);
      if (entry->ready.load(std::memory_order_relaxed)) {
        spec = &entry->spec;
        cached = true;
      } else {
        Specialization built;
        built.label = std::make_shared<const std::string>(
            detail::cat("kernel '", site.name, "'",
                        site.loc.known() ? " (defined at " + site.loc.str() + ")" : ""));
        // Traced twice: a body whose trace is not a function of the key is refused here. The
        // source holds a copy of this thread's tensor specs: the trace runs user code, which may
        // launch (and so reuse this thread's buffers) before they are read.
        SpecializationSource source{
            site.name, *device, [&] { return tile::trace_twice([&] { return trace(params()); }); },
            nullptr,   nullptr, tensor_specs};
        // Compiled by an earlier process of this program: read back, not traced (ir_cache.hpp).
        const std::string stored = ir_cache::key(
            site.identity, std::string_view(key).substr(sizeof site.identity), *device);
        if (!stored.empty()) {
          source.read_back = [&] { return ir_cache::find(stored, *device, *built.label); };
          source.keep = [&](const CompiledKernel& k) { ir_cache::store(stored, k, *built.label); };
        }
        // Traced, checked, lowered, compiled and loaded, stage by stage: compile_pipeline.cpp.
        CompiledSpecialization compiled = compile_specialization(source);
        // TESSERA_CHECK is read here, once per specialization (as ir_cache reads it), not on each
        // launch: getenv's walk of the environment was ~10% of a launch's host instructions.
        if (env_list_has("TESSERA_CHECK", "trace")) built.traced = std::move(compiled.traced);
        built.kernel = std::move(compiled.kernel);
        built.gpu = std::move(compiled.gpu);
        entry->spec = std::move(built);
        entry->ready.store(true, std::memory_order_release);
        spec = &entry->spec;
      }
    }
    // (A specialization read back by ir_cache has no trace to compare with; it is not read back
    // under TESSERA_CHECK=trace.)
    if (cached && spec->traced) tile::recheck_trace(*spec->traced, [&] { return trace(params()); });
  }
  clock.mark(&LaunchProfile::lookup_ns);
  CheckedLaunch checked;
  checked.label_ = spec->label;
  checked.device_ = *device;
  checked.kernel_ = spec->kernel;
  checked.gpu_ = spec->gpu;
  backend::LaunchArgs& launch_args = checked.args_;
  launch_args.grid = std::move(grid);
  // Their memory is reused from earlier launches (given back when this one has started).
  checked.uses_ = SpareVectors<std::pair<const Storage*, bool>>::take();
  launch_args.args = SpareVectors<backend::ArgValue>::take();
  checked.uses_.reserve(args.size());
  launch_args.args.reserve(args.size());
  for (const LaunchArg& a : args) {
    backend::ArgValue v;
    if (a.tensor) checked.uses_.emplace_back(a.tensor->storage(), written(a.kind));
    if (a.tensor)
      v.tensor = backend::TensorArg{HandleInternals::data(*a.tensor), a.tensor->dtype(),
                                    a.tensor->shape(), a.tensor->strides()};
    v.scalar = a.scalar;
    v.iscalar = a.iscalar;
    launch_args.args.push_back(std::move(v));
  }
  // What the GPU backend checks against the device (threads, shared memory, ranks, the grid's
  // extent) is checked here too, while the caller still holds the arguments.
  // (The kernel is lent to it and taken back: moved, not copied, so no reference count changes.)
  backend::Loaded loaded{std::move(checked.gpu_)};
  device_backend.check_launch(loaded, launch_args);
  checked.gpu_ = std::move(loaded.gpu);
  if (capturing()) checked.capture_ = capture_arguments(site, args, *device, call);
  clock.mark(&LaunchProfile::pack_ns);
  return checked;
}

std::shared_ptr<Completion> CheckedLaunch::start() && {
  // The lists' memory goes to the next launch once this one has started (or failed to).
  struct GiveBack {
    CheckedLaunch& l;
    ~GiveBack() {
      SpareVectors<std::pair<const Storage*, bool>>::give(std::move(l.uses_));
      SpareVectors<backend::ArgValue>::give(std::move(l.args_.args));
    }
  } give_back{*this};
  if (capture_) return capture_launch(label_, kernel_, gpu_, args_, uses_, *capture_);
  PhaseClock clock;
  // This thread's lists, reused: no heap allocation per launch once they have grown. (Nothing
  // called below starts another launch on this thread.) The predecessors are cleared on the way
  // out, so that they keep no earlier launch alive.
  thread_local std::vector<StorageUse> uses;
  thread_local Predecessors before;
  struct Clear {
    ~Clear() {
      before.writers.clear();
      before.readers.clear();
    }
  } clear_before;
  uses.clear();
  for (const auto& [storage, written] : uses_) uses.push_back({storage, written});
  const std::unique_lock<std::mutex> graph_order = graph_order_lock(uses);
  PendingAccess::predecessors(uses, before);
  clock.mark(&LaunchProfile::start_ns);
  // The CPU's backend queues the IR on its workers; a GPU's, on the stream of this thread's
  // StreamScope or the device's own (tessera/backend/backend.hpp, Backend::start). The arguments
  // and the predecessor lists are lent: what the backend does not keep comes back for reuse.
  const ir::Function* fn = &kernel_->fn;
  std::shared_ptr<Completion> done =
      backend::backend_for(device_.kind())
          .start({std::move(label_), device_,
                  std::shared_ptr<const ir::Function>(std::move(kernel_), fn), std::move(gpu_),
                  args_, before.writers, before.readers});
  clock.mark(&LaunchProfile::queue_ns);
  PendingAccess::record(uses, done);
  clock.mark(&LaunchProfile::start_ns);
  clock.count_launch();
  return done;
}

void fail_scalar_narrowing(const KernelSite& site, size_t index, size_t count,
                           const std::string& value, DType to, Narrowing why, SourceLoc call) {
  const std::vector<std::string> names = parameter_names(site.param_text, count);
  const char* remedy = why == Narrowing::Fraction
                           ? "; round it explicitly (std::lround), or declare the parameter with a "
                             "floating-point type"
                           : "; pass a value that fits, or declare the parameter with a type that "
                             "holds it";
  fail_at<LaunchError>(
      call, "kernel '", site.name, "': ", describe(names, index, ir::ParamKind::Scalar), " is ",
      value, ", which ", narrowing_reason(why, to), "; binding it would change its value", remedy);
}

}  // namespace tessera::runtime

// The GPU half of the launch path: CUDA C++ source -> (JIT cache | NVRTC) -> cubin -> module on
// the device -> launch on the device's stream -> a Completion that waits for the launch's number on
// its stream's timeline (gpu_timeline.hpp: no event per launch).
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include "block_pool.hpp"
#include "compile_log.hpp"
#include "gpu_context.hpp"
#include "gpu_kernel.hpp"
#include "gpu_timeline.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/event.hpp"
#include "tessera/backend/cuda/launch.hpp"
#include "tessera/backend/cuda/memory.hpp"
#include "tessera/backend/cuda/module.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/backend/cuda/nvrtc_info.hpp"
#include "tessera/core/error.hpp"
#include "tessera/runtime/compile.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/jit_cache.hpp"
#include "tessera/runtime/launch.hpp"

namespace tessera::runtime {

namespace cuda = backend::cuda;

// Reads a launch's copy of its kernel's error report (cuda::launch put it there) once the launch
// is done, and throws the error it describes at the user's line. Each launch has its own copy,
// so the error is this launch's, whichever launches of the kernel ran before or after it.
void check_error_report(const GpuKernel& k, const void* report) {
  const cuda::LoadedKernel& l = k.loaded;
  long long bytes[cuda::kErrorReportBytes / sizeof(long long)] = {};
  // The launch's event has completed, so its copy of the report is final: read without waiting
  // for the work queued after it (a chain issued meanwhile must not be stalled by this read).
  cuda::copy_finished_to_host(*l.ctx, bytes, report, sizeof bytes);
  int flag = 0;
  std::memcpy(&flag, bytes, sizeof flag);
  if (flag == 0) return;
  const long long* info = bytes + 1;
  const size_t op = static_cast<size_t>(flag - 1);
  const SourceLoc loc = op < k.op_sites.size() ? k.op_sites[op].first : SourceLoc{};
  const std::string what = op < k.op_sites.size() ? k.op_sites[op].second : "an op";
  if (info[0] == 2)
    fail_at<KernelError>(loc, "kernel '", l.name, "': ", what, " has step ", info[1],
                         " in tile block ", info[4], "; it must be positive");
  if (info[0] == 3)
    fail_at<BoundsError>(loc, "kernel '", l.name, "': ", what, " in tile block ", info[4],
                         " has row index ", info[2], ", outside the tensor's extent ", info[3],
                         " along axis 0 (the GPU read the pad there); clamp the indices to "
                         "[0, extent) or select a valid row first");
  fail_at<BoundsError>(loc, "kernel '", l.name, "': ", what, " in tile block ", info[4],
                       " reaches element ", info[2], " along axis ", info[1],
                       ", outside the tensor's extent ", info[3],
                       "; load with padding (the default) to read past the edge");
}

namespace {

// A launch's error report: device memory from the stream-ordered pool, freed behind the work
// on the stream (so never while the launch may still write it).
class ErrorReport : public PooledNew<ErrorReport> {
 public:
  // On the device's own stream, like tensors: a launch on another stream waits for what is
  // queued there before it starts, and the report is freed there only after the launch's event
  // (GpuWork's destructor). A launch's stream may be gone by then; the device's never is.
  explicit ErrorReport(const cuda::DeviceContext& ctx)
      : ctx_(&ctx), p_(cuda::device_allocate(ctx, cuda::kErrorReportBytes)) {}
  ~ErrorReport() { cuda::device_free(*ctx_, p_); }
  ErrorReport(const ErrorReport&) = delete;
  ErrorReport& operator=(const ErrorReport&) = delete;
  void* get() const { return p_; }

 private:
  const cuda::DeviceContext* ctx_;
  void* p_;
};

}  // namespace

void order_event_on(const cuda::Event& event, void* stream) {
  const auto waiter = static_cast<CUstream>(stream);
  if (waiter == event.stream()) return;  // in order already, without asking the device
  try {
    if (event.query()) return;
  } catch (...) {  // the work failed: nothing to wait for; its wait() reports the failure
    return;
  }
  event.make_wait(waiter);
}

namespace {

// A launch as the Completion sees it: its number on its stream's timeline (no event of its own).
class GpuWork final : public DeviceWork, public PooledNew<GpuWork> {
 public:
  GpuWork(std::shared_ptr<StreamTimeline> timeline, uint64_t seq, const GpuKernel& kernel,
          std::unique_ptr<ErrorReport> report)
      : timeline_(std::move(timeline)), seq_(seq), kernel_(kernel), report_(std::move(report)) {}
  // The report is freed on the device's stream: behind this launch, if it ran on another one.
  ~GpuWork() override {
    if (!report_ || timeline_->stream() == kernel_.loaded.ctx->stream()) return;
    try {
      timeline_->order_on(seq_, kernel_.loaded.ctx->stream());
    } catch (...) {  // the driver refused the wait: wait here before the report is freed
      try {
        timeline_->wait(seq_);
      } catch (...) {
      }
    }
  }
  bool done() override { return timeline_->done(seq_); }
  void wait() override {
    timeline_->wait(seq_);
    if (report_) check_error_report(kernel_, report_->get());
  }
  void order_on(void* stream) override { timeline_->order_on(seq_, static_cast<CUstream>(stream)); }

 private:
  std::shared_ptr<StreamTimeline> timeline_;
  uint64_t seq_;
  const GpuKernel& kernel_;              // loaded kernels live as long as the process
  std::unique_ptr<ErrorReport> report_;  // null when the kernel has no check that can fail
};

}  // namespace

std::shared_ptr<const GpuKernel> gpu_prepare(Device d, const GpuKernelSource& k) {
  const cuda::DeviceContext& ctx = gpu_context(d);
  const cuda::Arch arch = gpu_arch(d);
  // Code for an older architecture (TESSERA_TARGET_ARCH) is loaded as PTX, which the driver
  // compiles for this GPU; a cubin runs only on its own architecture.
  const bool as_ptx = !(arch == cuda::exact_arch(ctx.props()));
  std::string options;
  for (const std::string& o : cuda::default_compile_options(arch)) options += o + " ";
  if (as_ptx) options += "image=ptx";
  const std::string key = jit_key({.program = k.source,
                                   .specialization = "entry=" + k.entry,
                                   .arch = arch.str(),
                                   .compiler_version = cuda::nvrtc_version(),
                                   .options = options});

  // One loaded kernel per device, key and launch configuration: modules are never unloaded, so
  // this bounds them. (The configuration is not part of the JIT key: it does not change the cubin.)
  std::string loaded_key = detail::cat(d.index(), "|", k.threads_per_block, "x", k.blocks_per_tile,
                                       "|", k.dynamic_shared_bytes, "|");
  for (const GpuParam& p : k.params)
    loaded_key += detail::cat(static_cast<int>(p.kind), dtype_name(p.dtype), ",");
  loaded_key += "|" + key;
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<const GpuKernel>> loaded;
  {
    std::lock_guard lock(mu);
    if (auto it = loaded.find(loaded_key); it != loaded.end()) return it->second;
  }

  dump_file("cuda", k.name, key, ".cu", k.source);
  const std::string file_name = k.name + ".cu";
  // TESSERA_LOG=compile: NVRTC's time, or the JIT cache's when it has the kernel.
  CompileStage nvrtc(k.name, "nvrtc");
  nvrtc.note("JIT cache hit");
  // PTX exists only where NVRTC runs; to dump it, compile even if the cache has the cubin.
  std::optional<cuda::CompiledCuda> fresh;
  if (dump_enabled("ptx") || dump_enabled("cubin")) {
    fresh = cuda::compile_cuda(k.source, file_name, arch);
    nvrtc.note("compiled for TESSERA_DUMP");
    dump_file("ptx", k.name, key, ".ptx", fresh->ptx);
    dump_file("cubin", k.name, key, ".cubin", {fresh->cubin.data(), fresh->cubin.size()});
  }
  const JitCache::Blob cubin = JitCache::global().get(key, k.name, [&] {
    nvrtc.note("compiled");
    if (as_ptx) {
      if (!fresh) fresh = cuda::compile_cuda(k.source, file_name, arch);
      std::vector<char> image(fresh->ptx.begin(), fresh->ptx.end());
      image.push_back('\0');  // cuModuleLoadData takes PTX as a C string
      return image;
    }
    if (fresh) return std::move(fresh->cubin);
    cuda::CompiledCuda compiled = cuda::compile_cuda(k.source, file_name, arch);
    if (!compiled.log.empty() && log_enabled("jit"))
      std::cerr << "tessera jit: NVRTC said, compiling " << k.name << ":\n" << compiled.log << "\n";
    return std::move(compiled.cubin);
  });

  nvrtc.end();

  auto kernel = std::make_shared<GpuKernel>();
  kernel->loaded = timed(k.name, "load", [&] {
    return cuda::load_kernel(ctx, *cubin, k.name, k.entry, k.dynamic_shared_bytes,
                             k.reports_errors);
  });
  kernel->config = {k.threads_per_block, k.dynamic_shared_bytes, k.blocks_per_tile, k.blocks_per_sm,
                    k.tensor_maps};
  // Programmatic dependent launch, for code that waits for the kernels before it (on this GPU,
  // which may run code built for an older architecture without the wait: TESSERA_TARGET_ARCH).
  kernel->config.programmatic_serialization = cuda::programmatic_serialization(
      cuda::exact_arch(ctx.props()), k.waits_for_prior_grids, cuda::driver().version);
  kernel->op_sites = k.op_sites;
  for (const GpuParam& p : k.params)
    kernel->params.push_back({p.kind != ir::ParamKind::Scalar, p.dtype});

  std::lock_guard lock(mu);
  // Another thread may have loaded it meanwhile; keep the first, so that there is one.
  return loaded.emplace(std::move(loaded_key), std::move(kernel)).first->second;
}

void gpu_check_launch(const GpuKernel& k, const backend::LaunchArgs& args) {
  cuda::check_launch(k.loaded, k.params, args, k.config);
}

std::shared_ptr<Completion> gpu_launch(const GpuKernel& k, const backend::LaunchArgs& args,
                                       std::shared_ptr<const std::string> label, void* stream,
                                       const std::vector<std::shared_ptr<Completion>>& after,
                                       const std::vector<std::shared_ptr<Completion>>& after_too,
                                       bool checked) {
  const cuda::DeviceContext& ctx = *k.loaded.ctx;
  const CUstream queue = stream ? static_cast<CUstream>(stream) : ctx.stream();
  std::unique_ptr<ErrorReport> report;
  if (k.loaded.error_flag) report = std::make_unique<ErrorReport>(ctx);
  // Allocations, fills, copies, frees and SIMT launches are queued on the device's own stream
  // (so is every launch without a StreamScope): a launch on another stream first waits for what
  // is queued there, which covers the memory it uses being allocated and filled.
  if (queue != ctx.stream()) cuda::Event(ctx).make_wait(queue);
  for (const std::shared_ptr<Completion>& c : after) c->order_on(queue);
  for (const std::shared_ptr<Completion>& c : after_too) c->order_on(queue);
  std::unique_lock order(k.order_mu, std::defer_lock);
  if (k.loaded.error_flag) {
    order.lock();
    if (k.last_launch && k.last_stream != queue) k.last_launch->order_on(queue);
  }
  // A copy: the registry's reference is this thread's, and is replaced by its next lookup.
  const std::shared_ptr<StreamTimeline> timeline = stream_timeline(ctx, queue);
  const uint64_t seq = timeline->queue([&] {
    cuda::queue_launch(k.loaded, k.params, args, k.config, report ? report->get() : nullptr, queue,
                       checked);
  });
  try {
    auto done = std::allocate_shared<Completion>(
        PoolAllocator<Completion>{}, std::make_unique<GpuWork>(timeline, seq, k, std::move(report)),
        std::move(label));
    if (order.owns_lock()) {
      k.last_launch = done;
      k.last_stream = queue;
    }
    return done;
  } catch (...) {  // the kernel runs: let it finish before the caller gets its arguments back
    try {
      timeline->wait(seq);
    } catch (...) {
    }
    throw;
  }
}

}  // namespace tessera::runtime

namespace tessera::runtime {

std::vector<GpuParam> gpu_params(const std::vector<ir::Param>& params) {
  std::vector<GpuParam> out;
  out.reserve(params.size());
  for (const ir::Param& p : params) out.push_back({p.kind, p.dtype});
  return out;
}

}  // namespace tessera::runtime

// The driver bridge on top of backend/cuda: the device's primary context and stream, the driver
// table loaded at run time, and NVRTC. SIMT launches share the stream with the rest of Tessera, so
// they are ordered with the copies and frees of the tensors they use.
#include <cuda.h>

#include <algorithm>
#include <vector>

#include "tessera/backend/cuda/context.hpp"
#include "tessera/backend/cuda/device.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/event.hpp"
#include "tessera/backend/cuda/memory.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/core/error.hpp"
#include "tessera/runtime/jit_cache.hpp"
#include "tessera/simt/detail/driver_bridge.hpp"

namespace tessera::simt::detail {

namespace {

namespace cuda = tessera::backend::cuda;

// A SIMT launch's event, as its Future's Completion sees it: an error of the kernel (a trap, a
// fault) is reported, naming the kernel, by the wait of the launch it belongs to.
class SimtWork final : public runtime::DeviceWork {
 public:
  SimtWork(std::unique_ptr<cuda::Event> event, std::string kernel, std::string gpu)
      : event_(std::move(event)), kernel_(std::move(kernel)), gpu_(std::move(gpu)) {}
  bool done() override {
    try {
      return event_->query();
    } catch (const BackendError& e) {
      failed(e);
    }
  }
  void wait() override {
    try {
      event_->synchronize();
    } catch (const BackendError& e) {
      failed(e);
    }
  }

 private:
  [[noreturn]] void failed(const BackendError& e) const {
    fail<BackendError>("SIMT kernel '", kernel_, "' failed on ", gpu_, ": ", e.what());
  }
  std::unique_ptr<cuda::Event> event_;
  std::string kernel_, gpu_;
};

class CudaDriverBridge final : public DriverBridge {
 public:
  bool usable(int ordinal, std::string* why) override {
    if (!cuda::driver_available(why)) return false;
    try {
      const int count = cuda::device_count();
      if (ordinal < 0 || ordinal >= count) {
        if (why)
          *why = tessera::detail::cat("the driver reports ", count, " GPU", count == 1 ? "" : "s",
                                      ", so cuda:", ordinal, " does not exist");
        return false;
      }
      const cuda::DeviceProps p = cuda::device_props(ordinal);
      if (p.cc_major < cuda::kMinComputeMajor) {
        if (why)
          *why = tessera::detail::cat(p.name, " is compute capability ", p.cc_major, ".",
                                      p.cc_minor, ", older than the 8.0 Tessera needs");
        return false;
      }
    } catch (const Error& e) {
      if (why) *why = e.what();
      return false;
    }
    return true;
  }

  DeviceLimits device_limits(int ordinal) override {
    const cuda::DeviceProps p = cuda::device_props(ordinal);
    CUdevice dev = 0;
    TESSERA_CU(cuDeviceGet, &dev, ordinal);
    auto attribute = [&](CUdevice_attribute a) {
      int value = 0;
      TESSERA_CU(cuDeviceGetAttribute, &value, a, dev);
      return static_cast<index_t>(value);
    };
    DeviceLimits d;
    d.ordinal = ordinal;
    d.name = p.name;
    d.cc = {p.cc_major, p.cc_minor};
    d.max_threads_per_block = p.max_threads_per_block;
    d.max_block[0] = p.max_block_x;
    d.max_block[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
    d.max_block[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
    d.max_grid[0] = p.max_grid_x;
    d.max_grid[1] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
    d.max_grid[2] = attribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
    d.shared_per_block = p.shared_per_block;
    d.shared_per_block_optin = p.shared_per_block_optin;
    d.warp_size = p.warp_size;
    return d;
  }

  void* load_module(int ordinal, const void* image, size_t, std::string_view what) override {
    const cuda::DeviceContext& ctx = cuda::device_context(ordinal);
    ctx.make_current();
    CUmodule module = nullptr;
    TESSERA_CU_WHILE(
        tessera::detail::cat("loading the SIMT kernels of ", what, " on ", ctx.props().name,
                             " (an image needs code for this GPU's architecture, sm_",
                             ctx.props().cc_major, ctx.props().cc_minor, ")"),
        cuModuleLoadData, &module, image);
    return module;
  }

  void* find_function(void* module, const std::string& entry) override {
    const cuda::DriverApi& api = cuda::driver();
    const auto mod = static_cast<CUmodule>(module);
    if (api.cuModuleGetFunctionCount && api.cuModuleEnumerateFunctions && api.cuFuncGetName) {
      // A program's kernels are spread over several images: look the name up among the
      // module's own functions instead of probing each image for it.
      unsigned count = 0;
      TESSERA_CU(cuModuleGetFunctionCount, &count, mod);
      std::vector<CUfunction> functions(count);
      TESSERA_CU(cuModuleEnumerateFunctions, functions.data(), count, mod);
      const bool here = std::any_of(functions.begin(), functions.end(), [&](CUfunction f) {
        const char* name = nullptr;
        TESSERA_CU(cuFuncGetName, &name, f);
        return name && entry == name;
      });
      if (!here) return nullptr;
      // Enumerated handles may not be loaded yet (lazy module loading): ask by name for one
      // that is, now that the name is known to be there.
    }
    CUfunction f = nullptr;
    const CUresult r = api.cuModuleGetFunction(&f, mod, entry.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) return nullptr;
    cuda::check(r, "cuModuleGetFunction", entry);
    return f;
  }

  std::optional<std::vector<unsigned char>> read_global(int ordinal, void* module,
                                                        const std::string& name) override {
    const cuda::DeviceContext& ctx = cuda::device_context(ordinal);
    ctx.make_current();
    CUdeviceptr address = 0;
    size_t bytes = 0;
    const CUresult r = cuda::driver().cuModuleGetGlobal(
        &address, &bytes, static_cast<CUmodule>(module), name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) return std::nullopt;
    cuda::check(r, "cuModuleGetGlobal", name);
    std::vector<unsigned char> out(bytes);
    TESSERA_CU(cuMemcpyDtoHAsync, out.data(), address, bytes, ctx.stream());
    TESSERA_CU(cuStreamSynchronize, ctx.stream());
    return out;
  }

  FunctionLimits function_limits(int ordinal, void* function) override {
    cuda::device_context(ordinal).make_current();
    auto attribute = [&](CUfunction_attribute a) {
      int value = 0;
      TESSERA_CU(cuFuncGetAttribute, &value, a, static_cast<CUfunction>(function));
      return value;
    };
    FunctionLimits f;
    f.max_threads_per_block = attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    f.static_shared_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    f.registers = attribute(CU_FUNC_ATTRIBUTE_NUM_REGS);
    return f;
  }

  void allow_dynamic_shared(int ordinal, void* function, index_t bytes) override {
    cuda::device_context(ordinal).make_current();
    TESSERA_CU_WHILE(tessera::detail::cat("allowing ", bytes, " bytes of dynamic shared memory"),
                     cuFuncSetAttribute, static_cast<CUfunction>(function),
                     CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
  }

  // Through the JIT cache (memory and disk), like the tile path's kernels: a source compiles once
  // per GPU architecture and NVRTC version, not once per process.
  std::vector<char> compile(int ordinal, const std::string& source,
                            const std::string& name) override {
    const cuda::Arch arch = cuda::exact_arch(cuda::device_props(ordinal));
    const std::string arch_text = arch.str();
    constexpr const char* kOptions = "-std=c++20";
    const std::string key = runtime::jit_key({.program = source,
                                              .specialization = "simt",
                                              .arch = arch_text,
                                              .compiler_version = cuda::nvrtc_version(),
                                              .options = kOptions});
    const runtime::JitCache::Blob cubin = runtime::JitCache::global().get(
        key, name, [&] { return cuda::compile_cuda(source, name, arch, {kOptions}).cubin; });
    return *cubin;
  }

  std::unique_ptr<runtime::DeviceWork> launch(const LaunchRequest& r) override {
    const cuda::DeviceContext& ctx = cuda::device_context(r.ordinal);
    ctx.make_current();
    void* params[] = {const_cast<void*>(r.args)};
    TESSERA_CU_WHILE(tessera::detail::cat("launching SIMT kernel '", r.kernel, "'"), cuLaunchKernel,
                     static_cast<CUfunction>(r.function), r.grid[0], r.grid[1], r.grid[2],
                     r.block[0], r.block[1], r.block[2],
                     static_cast<unsigned>(r.dynamic_shared_bytes), ctx.stream(), params, nullptr);
    return std::make_unique<SimtWork>(std::make_unique<cuda::Event>(ctx), std::string(r.kernel),
                                      ctx.props().name);
  }
};

}  // namespace

DriverBridge& cuda_driver_bridge() {
  static CudaDriverBridge bridge;
  return bridge;
}

}  // namespace tessera::simt::detail

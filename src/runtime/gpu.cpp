// Whether a GPU is usable, and its memory, on top of backend/cuda.
#include "tessera/runtime/gpu.hpp"

#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <string_view>
#include <vector>

#include "gpu_context.hpp"
#include "tessera/backend/cuda/device.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/memory.hpp"
#include "tessera/backend/cuda/nvrtc_info.hpp"
#include "tessera/core/error.hpp"
#include "tessera/runtime/env.hpp"

namespace tessera::runtime {

namespace cuda = backend::cuda;

namespace {

// Why GPU `index` cannot run kernels, or "" when it can.
std::string why_not(int index) {
  std::string why;
  if (!cuda::driver_available(&why)) return why;
  try {
    const int count = cuda::device_count();
    if (count == 0)
      return "the CUDA driver reports no GPU; check that one is visible (nvidia-smi, "
             "CUDA_VISIBLE_DEVICES)";
    if (index < 0 || index >= count)
      return detail::cat("GPU cuda:", index, " does not exist: the driver reports ", count,
                         count == 1 ? " GPU (cuda:0)" : " GPUs");
    const cuda::DeviceProps p = cuda::device_props(index);
    if (p.cc_major < cuda::kMinComputeMajor) {
      std::string other;
      for (int i = 0; i < count && other.empty(); ++i)
        if (cuda::device_props(i).cc_major >= cuda::kMinComputeMajor)
          other = detail::cat(" (cuda:", i, " is: set TESSERA_DEVICE=cuda:", i, ")");
      return detail::cat("GPU cuda:", index, " (", p.name, ") has compute capability ", p.cc_major,
                         ".", p.cc_minor, ", but Tessera needs ", cuda::kMinComputeMajor,
                         ".0 (Ampere) or newer", other);
    }
    if (!cuda::nvrtc_available(&why)) return why;
    const int driver = cuda::driver().version;
    const int nvrtc = cuda::nvrtc_version();
    // A cubin from a newer major version of the compiler does not load on an older driver.
    if (nvrtc / 1000 > driver / 1000)
      return detail::cat("NVRTC ", cuda::version_string(nvrtc), " (", cuda::nvrtc_library(),
                         ") is newer than the CUDA driver (CUDA ", cuda::version_string(driver),
                         "), which cannot load what it compiles; update the NVIDIA driver, or "
                         "point CUDA_HOME at a CUDA ",
                         driver / 1000, " toolkit");
    if (!cuda::nvrtc_supports(cuda::exact_arch(p), &why)) return why;
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

// The answer of why_not, once per GPU (the machine does not change while the process runs).
const std::string& cached_why_not(int index) {
  // Leaked on purpose: GPU memory freed from static destructors still finds it.
  static auto* mu = new std::mutex;
  static auto* answers = new std::map<int, std::string>;
  std::lock_guard lock(*mu);
  auto it = answers->find(index);
  if (it == answers->end()) it = answers->emplace(index, why_not(index)).first;
  return it->second;
}

}  // namespace

bool gpu_usable(std::string* why) {
  const std::string& reason = cached_why_not(0);
  if (!reason.empty() && why) *why = reason;
  return reason.empty();
}

void require_gpu(Device d) {
  if (d.is_cpu()) return;
  const std::string& reason = cached_why_not(d.index());
  if (!reason.empty())
    fail<UsageError>("device ", d.str(), " was asked for, but ", reason,
                     "; or run on the CPU backend (TESSERA_DEVICE=cpu)");
}

const cuda::DeviceContext& gpu_context(Device d) {
  // Devices that passed require_gpu, one bit each: the check runs once per device, and later
  // calls (every allocation, copy and launch) cost one atomic load.
  static std::atomic<uint64_t> checked{0};
  const int index = d.index();
  const uint64_t bit = index >= 0 && index < 64 ? uint64_t{1} << index : 0;
  TESSERA_INTERNAL_CHECK(d.is_cuda(), d.str(), " is not a GPU");
  if (!bit || !(checked.load(std::memory_order_acquire) & bit)) {
    require_gpu(d);
    checked.fetch_or(bit, std::memory_order_acq_rel);
  }
  return cuda::device_context(index);
}

void* gpu_allocate(Device d, size_t bytes) {
  return cuda::device_allocate(gpu_context(d), bytes);
}

void gpu_free(Device d, void* p) {
  if (!p) return;
  try {
    cuda::device_free(gpu_context(d), p);
  } catch (const std::exception& e) {  // gpu_context cannot fail for memory it handed out
    std::cerr << "tessera: could not free GPU memory on " << d.str() << ": " << e.what() << "\n";
  }
}

void gpu_copy_to_device(Device d, void* dst, const void* host_src, size_t bytes) {
  cuda::copy_host_to_device(gpu_context(d), dst, host_src, bytes);
}

void gpu_copy_to_host(Device d, void* host_dst, const void* src, size_t bytes) {
  cuda::copy_device_to_host(gpu_context(d), host_dst, src, bytes);
}

void gpu_copy_on_device(Device d, void* dst, const void* src, size_t bytes) {
  cuda::copy_device_to_device(gpu_context(d), dst, src, bytes);
}

void gpu_fill(Device d, void* dst, const void* element, size_t element_bytes, size_t count) {
  cuda::fill_elements(gpu_context(d), dst, element, element_bytes, count);
}

void gpu_synchronize(Device d) {
  cuda::synchronize(gpu_context(d));
}

backend::cuda::Arch gpu_arch(Device d) {
  const cuda::DeviceProps& props = gpu_context(d).props();
  const cuda::Arch exact = cuda::exact_arch(props);
  const std::vector<std::string_view> target = env_list("TESSERA_TARGET_ARCH");
  if (target.empty()) return exact;
  if (target.size() > 1)
    fail<UsageError>("TESSERA_TARGET_ARCH names one architecture (like sm_80), not ",
                     target.size());
  const cuda::Arch arch = cuda::parse_arch(target[0], "TESSERA_TARGET_ARCH");
  if (arch.major * 10 + arch.minor > exact.major * 10 + exact.minor ||
      arch.major < cuda::kMinComputeMajor || (arch.specific && arch != exact))
    fail<UsageError>("TESSERA_TARGET_ARCH=", arch.str(), " cannot run on ", d.str(), " (",
                     props.name, ", ", exact.str(), "): name sm_", cuda::kMinComputeMajor,
                     "0 or newer, no newer than the GPU, with the \"a\" suffix only for the "
                     "GPU's own architecture");
  return arch;
}

}  // namespace tessera::runtime

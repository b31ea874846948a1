// `tessera doctor`: what Tessera finds on this machine, one ✓/✗ line per check, and whether it can
// run kernels. Exit status 0 when it can (on the CPU backend when no GPU is there), 1 when
// something it needs is broken: TESSERA_DEVICE names a GPU that cannot be used, a GPU is there but
// NVRTC cannot compile for it or a test kernel does not run on it, or a setting is malformed.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <vector>

#include "commands.hpp"
#include "tessera/backend/cuda/abi_source.hpp"
#include "tessera/backend/cuda/device.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/backend/cuda/nvrtc_info.hpp"
#include "tessera/core/error.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/jit_cache.hpp"
#include "tessera/runtime/launch.hpp"

namespace tessera::tools {

namespace {

namespace cuda = backend::cuda;

struct Report {
  bool broken = false;  // something Tessera needs failed

  // One check. `needed`: a failure means Tessera cannot run kernels as configured.
  void check(bool ok, std::string_view what, std::string_view detail, bool needed = true) {
    std::cout << (ok ? "✓ " : "✗ ") << what << ": " << detail
              << (!ok && !needed ? " (not needed to run kernels)" : "") << "\n";
    if (!ok && needed) broken = true;
  }
};

// The first line of an error: enough for a ✗ line (NVRTC's log follows on the next ones).
std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string gib(size_t bytes) {
  std::ostringstream os;
  os.precision(1);
  os << std::fixed << static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return os.str();
}

// y = a * x + y over a 1-D tensor, one element per thread, as abi.hpp lays out the arguments.
std::string test_kernel_source() {
  return std::string(cuda::abi_source()) + R"(
extern "C" __global__ void tessera_doctor_axpy(TesseraGrid grid, TesseraTensorRef y,
                                               TesseraTensorRef x, float a) {
  float* yp = (float*)y.data;
  const float* xp = (const float*)x.data;
  for (tessera_i64 b = blockIdx.x; b < grid.total; b += gridDim.x) {
    tessera_i64 i = b * blockDim.x + threadIdx.x;
    if (i < y.shape[0]) yp[i * y.strides[0]] = a * xp[i * x.strides[0]] + yp[i * y.strides[0]];
  }
}
)";
}

// Runs the test kernel on `d` and checks its result; "" when it worked, else what went wrong.
std::string run_test_kernel(Device d) {
  constexpr int64_t n = 1000;  // not a multiple of the block: the last block is ragged
  constexpr int threads = 256;
  runtime::GpuKernelSource src;
  src.name = "tessera_doctor_axpy";
  src.entry = "tessera_doctor_axpy";
  src.source = test_kernel_source();
  src.threads_per_block = threads;
  src.params = {{ir::ParamKind::Out, DType::F32},
                {ir::ParamKind::In, DType::F32},
                {ir::ParamKind::Scalar, DType::F32}};
  std::vector<float> x(n), y(n, 1.0f), out(n);
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  const size_t bytes = n * sizeof(float);
  void* dx = runtime::gpu_allocate(d, bytes);
  void* dy = runtime::gpu_allocate(d, bytes);
  std::string problem;
  try {
    runtime::gpu_copy_to_device(d, dx, x.data(), bytes);
    runtime::gpu_copy_to_device(d, dy, y.data(), bytes);
    auto kernel = runtime::gpu_prepare(d, src);
    backend::LaunchArgs args;
    args.grid = {ceil_div(n, threads)};
    args.args.resize(3);
    args.args[0].tensor = {dy, DType::F32, {n}, {1}};
    args.args[1].tensor = {dx, DType::F32, {n}, {1}};
    args.args[2].scalar = 2.0;
    runtime::gpu_launch(*kernel, args)->wait();
    runtime::gpu_copy_to_host(d, out.data(), dy, bytes);
    for (int64_t i = 0; i < n && problem.empty(); ++i)
      if (out[static_cast<size_t>(i)] != 2.0f * static_cast<float>(i) + 1.0f)
        problem = detail::cat("wrong result at element ", i, ": ", out[static_cast<size_t>(i)],
                              " instead of ", 2.0f * static_cast<float>(i) + 1.0f);
  } catch (const std::exception& e) {
    problem = first_line(e.what());
  }
  runtime::gpu_free(d, dx);
  runtime::gpu_free(d, dy);
  return problem;
}

std::optional<std::string> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace

int doctor(const std::vector<std::string>& args) {
  if (!args.empty()) {
    std::cerr << "usage: tessera doctor\n";
    return 2;
  }
  Report r;
  std::cout << "Tessera " << runtime::tessera_version() << "\n";
  r.check(true, "CPU backend", "always available");

  // What the user asked for.
  std::optional<Device> wanted;
  if (const char* env = std::getenv("TESSERA_DEVICE"); env && *env) {
    try {
      wanted = Device::parse(env);
      r.check(true, "TESSERA_DEVICE", detail::cat(env, " (", wanted->str(), ")"));
    } catch (const Error& e) {
      r.check(false, "TESSERA_DEVICE", e.what());
    }
  }

  // The driver and the GPUs.
  std::string why;
  std::vector<cuda::DeviceProps> gpus;
  bool have_driver = cuda::driver_available(&why);
  if (have_driver) {
    r.check(true, "CUDA driver", "loaded, CUDA " + cuda::version_string(cuda::driver().version));
    try {
      const int count = cuda::device_count();
      if (count == 0) r.check(false, "GPUs", "the driver reports none", false);
      for (int i = 0; i < count; ++i) gpus.push_back(cuda::device_props(i));
    } catch (const Error& e) {
      r.check(false, "GPUs", first_line(e.what()), false);
    }
  } else {
    r.check(false, "CUDA driver", why, false);
  }
  std::vector<cuda::Arch> archs;  // to compile the test kernel for
  auto add_arch = [&archs](cuda::Arch a) {
    for (const cuda::Arch& b : archs)
      if (b.str() == a.str()) return;
    archs.push_back(a);
  };
  bool have_gpu = false;  // one Tessera could use
  for (const cuda::DeviceProps& p : gpus) {
    const cuda::Arch arch = cuda::exact_arch(p);
    const bool ok = p.cc_major >= cuda::kMinComputeMajor;
    std::string text =
        detail::cat(p.name, ", compute capability ", p.cc_major, ".", p.cc_minor, " (", arch.str(),
                    "), ", p.multiprocessors, " SMs, ", gib(p.total_memory));
    if (!ok) text += detail::cat("; Tessera needs ", cuda::kMinComputeMajor, ".0 or newer");
    r.check(ok, detail::cat("GPU cuda:", p.ordinal), text, false);
    if (!ok) continue;
    have_gpu = true;
    add_arch(cuda::Arch{p.cc_major, p.cc_minor, false});
    if (arch.specific) add_arch(arch);
  }

  // GPU checks matter when a GPU is there or asked for, unless the CPU is asked for by name.
  const bool cpu_forced = wanted && wanted->is_cpu();
  const bool gpu_needed = (have_gpu && !cpu_forced) || (wanted && wanted->is_cuda());

  // NVRTC: needed when there is a GPU to compile for.
  const bool have_nvrtc = cuda::nvrtc_available(&why);
  if (have_nvrtc) {
    r.check(
        true, "NVRTC",
        detail::cat(cuda::version_string(cuda::nvrtc_version()), " (", cuda::nvrtc_library(), ")"));
    if (have_driver && have_gpu) {
      const int driver = cuda::driver().version, nvrtc = cuda::nvrtc_version();
      r.check(nvrtc / 1000 <= driver / 1000 || !gpu_needed, "NVRTC and driver",
              detail::cat("NVRTC ", cuda::version_string(nvrtc), ", driver CUDA ",
                          cuda::version_string(driver),
                          nvrtc / 1000 <= driver / 1000
                              ? ": the driver loads what NVRTC compiles"
                              : ": the driver is too old to load what NVRTC compiles; update it"));
    }
  } else {
    r.check(false, "NVRTC", why, gpu_needed);
  }
  if (have_nvrtc) {
    // Without a GPU, the architectures CI compiles for: NVRTC works, if only for the record.
    if (!have_gpu) archs = {cuda::Arch{8, 0, false}, cuda::Arch{9, 0, true}};
    const std::string source = test_kernel_source();
    for (const cuda::Arch& arch : archs) {
      const std::string a = arch.str();
      const auto t0 = std::chrono::steady_clock::now();
      try {
        cuda::compile_cuda(source, "tessera_doctor_axpy.cu", arch);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        r.check(true, "NVRTC compiles for " + a,
                detail::cat("a test kernel in ", static_cast<int>(ms), " ms"));
      } catch (const Error& e) {
        r.check(false, "NVRTC compiles for " + a, first_line(e.what()), gpu_needed);
      }
    }
  }

  // The GPU Tessera would use: asked for by name, else cuda:0.
  const Device target = wanted && wanted->is_cuda() ? *wanted : Device::cuda(0);
  std::string unusable;
  bool usable = false;
  try {
    runtime::require_gpu(target);
    usable = true;
  } catch (const Error& e) {
    unusable = e.what();
  }
  if (usable) {
    const std::string problem = run_test_kernel(target);
    r.check(problem.empty(), "test kernel on " + target.str(),
            problem.empty() ? "ran, result checked" : problem, gpu_needed);
  } else if (gpu_needed) {
    // Asked for, or there but unusable: that is broken, not absent.
    r.check(false, "GPU " + target.str(), unusable);
  }

  // The kernel cache: kernels are compiled again in every process without it, but still run.
  try {
    runtime::JitCache cache(runtime::JitCache::config_from_environment());
    if (cache.disk_writable(&why)) {
      const runtime::JitCache::DiskUsage u = cache.disk_usage();
      r.check(true, "kernel cache",
              detail::cat(cache.dir().string(), " is writable (", u.entries,
                          u.entries == 1 ? " entry, " : " entries, ", u.bytes, " bytes; bound ",
                          cache.max_bytes(), " bytes)"));
    } else {
      r.check(false, "kernel cache", why + "; kernels will be compiled again in each process",
              false);
    }
  } catch (const Error& e) {
    r.check(false, "kernel cache", e.what());
  }

  // nvcc: only the SIMT path's ahead-of-time helper uses it.
  if (auto nvcc = find_on_path("nvcc"))
    r.check(true, "nvcc", *nvcc + " (optional: for the SIMT path's ahead-of-time helper)");
  else
    r.check(false, "nvcc", "not on PATH (optional: for the SIMT path's ahead-of-time helper)",
            false);

  std::cout << "\n";
  if (r.broken) {
    std::cout << "✗ Tessera cannot run kernels as configured: fix the ✗ lines above that are "
                 "needed.\n";
    return 1;
  }
  if (cpu_forced) {
    std::cout << "✓ Tessera will run kernels on the CPU backend (TESSERA_DEVICE=cpu).\n";
  } else if (usable) {
    std::cout << "✓ Tessera will run kernels on " << target.str() << " ("
              << gpus[static_cast<size_t>(target.index())].name << ").\n";
  } else {
    std::cout << "✓ No usable GPU: Tessera will run kernels on the CPU backend.\n";
  }
  return 0;
}

}  // namespace tessera::tools

// Everything the SIMT layer needs from the GPU, behind one small interface: the device's limits,
// loading an image, finding a function and its limits, NVRTC, and launching. The real bridge
// (src/simt/driver_bridge_cuda.cpp) is built on backend/cuda; the CPU tests install a fake one
// with made-up limits that records launches, so that every check of prepare() and of a launch runs
// without a GPU.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/runtime/launch.hpp"
#include "tessera/simt/limits.hpp"

namespace tessera::simt::detail {

// A launch as the driver takes it. `args` is the kernel's ArgPack: the entry's one parameter.
struct LaunchRequest {
  std::string_view kernel;  // for messages
  int ordinal = 0;
  void* function = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t dynamic_shared_bytes = 0;
  const void* args = nullptr;
  size_t args_bytes = 0;
};

class DriverBridge {
 public:
  virtual ~DriverBridge() = default;
  // True when GPU `ordinal` can run SIMT kernels; else false with the reason and the remedy.
  virtual bool usable(int ordinal, std::string* why) = 0;
  virtual DeviceLimits device_limits(int ordinal) = 0;
  // Loads a cubin, fatbin or PTX image on the device; `what` names it in errors. Never returns
  // null: throws BackendError when the driver refuses the image (no code for this GPU, ...).
  virtual void* load_module(int ordinal, const void* image, size_t bytes,
                            std::string_view what) = 0;
  // The extern "C" function `entry` of a loaded module, or nullptr when the module has none.
  virtual void* find_function(void* module, const std::string& entry) = 0;
  virtual FunctionLimits function_limits(int ordinal, void* function) = 0;
  // The bytes of the global variable `name` of a loaded module (a kernel's signature record), or
  // nothing when the module has no such variable.
  virtual std::optional<std::vector<unsigned char>> read_global(int ordinal, void* module,
                                                                const std::string& name) = 0;
  // Lets the function launch with `bytes` of dynamic shared memory (opting in past 48 KiB).
  virtual void allow_dynamic_shared(int ordinal, void* function, index_t bytes) = 0;
  // Compiles CUDA C++ for the exact architecture of GPU `ordinal`; returns the cubin. Throws
  // BackendError with NVRTC's log when it does not compile.
  virtual std::vector<char> compile(int ordinal, const std::string& source,
                                    const std::string& name) = 0;
  // Queues the launch on the device's stream and returns its completion (what the launch's Future
  // waits for; its wait() throws BackendError naming the kernel when the kernel failed), or null
  // when the work is already done. Throws BackendError when the driver refuses the launch.
  virtual std::unique_ptr<runtime::DeviceWork> launch(const LaunchRequest& request) = 0;
};

// The bridge in use: the CUDA one, unless a test installed another.
DriverBridge& driver_bridge();

// Installs `bridge` for the lifetime of this object (tests). Not thread-safe against launches in
// flight; install before, restore after.
class ScopedDriverBridge {
 public:
  explicit ScopedDriverBridge(DriverBridge& bridge);
  ~ScopedDriverBridge();
  ScopedDriverBridge(const ScopedDriverBridge&) = delete;
  ScopedDriverBridge& operator=(const ScopedDriverBridge&) = delete;

 private:
  DriverBridge* previous_;
};

}  // namespace tessera::simt::detail

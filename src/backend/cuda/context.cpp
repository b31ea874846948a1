#include "tessera/backend/cuda/context.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "tessera/backend/cuda/driver.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

DeviceContext::DeviceContext(int ordinal) : props_(device_props(ordinal)) {
  if (props_.cc_major < kMinComputeMajor)
    fail<UsageError>("GPU cuda:", ordinal, " (", props_.name, ") has compute capability ",
                     props_.cc_major, ".", props_.cc_minor, ", but Tessera needs ",
                     kMinComputeMajor,
                     ".0 (Ampere) or newer; use a newer GPU, or "
                     "TESSERA_DEVICE=cpu");
  const std::string what = detail::cat("setting up GPU cuda:", ordinal);
  TESSERA_CU_WHILE(what, cuDeviceGet, &device_, ordinal);
  TESSERA_CU_WHILE(what, cuDevicePrimaryCtxRetain, &context_, device_);
  TESSERA_CU_WHILE(what, cuCtxSetCurrent, context_);
  // Non-blocking: Tessera's stream never waits for the legacy default stream that other code in
  // the process may use, and the legacy stream does not wait for it.
  TESSERA_CU_WHILE(what, cuStreamCreate, &stream_, CU_STREAM_NON_BLOCKING);
  if (props_.memory_pools) {
    TESSERA_CU_WHILE(what, cuDeviceGetDefaultMemPool, &pool_, device_);
    // Keep freed memory in the pool instead of handing it back to the driver at each
    // synchronisation, so that the next tensors of a loop reuse it without a system call.
    cuuint64_t threshold = std::numeric_limits<cuuint64_t>::max();
    TESSERA_CU_WHILE(what, cuMemPoolSetAttribute, pool_, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                     &threshold);
  }
}

void DeviceContext::make_current() const {
  // Asked first: reading the thread's context is cheaper than setting it, and the launch path
  // makes the context current several times per launch. (Another library may have made its own
  // context current on this thread meanwhile, so the answer is not cached.)
  CUcontext current = nullptr;
  if (driver().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context_) return;
  TESSERA_CU(cuCtxSetCurrent, context_);
}

const DeviceContext& device_context(int ordinal) {
  // Leaked on purpose (see the header): tensors freed by static destructors still find them.
  static auto* mu = new std::mutex;
  static auto* contexts = new std::vector<std::unique_ptr<DeviceContext>>;
  // Validate first (outside the lock the check is cheap and throws the UsageError for a bad
  // ordinal); the count does not change while the process runs.
  static const int count = device_count();
  if (ordinal < 0 || ordinal >= count)
    fail<UsageError>("GPU cuda:", ordinal, " does not exist: the driver reports ", count,
                     count == 1 ? " GPU (cuda:0)" : " GPUs", "; use a device index below ", count);
  std::lock_guard lock(*mu);
  if (contexts->empty()) contexts->resize(static_cast<size_t>(count));
  auto& slot = (*contexts)[static_cast<size_t>(ordinal)];
  if (!slot) slot.reset(new DeviceContext(ordinal));  // a failure is not cached: retried next time
  slot->make_current();
  return *slot;
}

}  // namespace tessera::backend::cuda

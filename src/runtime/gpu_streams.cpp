#include "gpu_streams.hpp"

#include <iostream>

#include "gpu_context.hpp"
#include "gpu_timeline.hpp"
#include "tessera/backend/cuda/driver.hpp"
#include "tessera/backend/cuda/event.hpp"

namespace tessera::runtime {

namespace cuda = backend::cuda;

void* gpu_create_stream(Device d) {
  const cuda::DeviceContext& ctx = gpu_context(d);
  ctx.make_current();
  CUstream s = nullptr;
  // Non-blocking, like the device's own stream: no implicit order with the legacy stream.
  TESSERA_CU(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
  return s;
}

void gpu_destroy_stream(Device d, void* stream) noexcept {
  if (!stream) return;
  // Its launches keep their timeline; a stream made later with the same handle gets a new one.
  forget_stream_timeline(static_cast<CUstream>(stream));
  try {
    const cuda::DeviceContext& ctx = gpu_context(d);
    ctx.make_current();
    const CUresult r = cuda::driver().cuStreamDestroy(static_cast<CUstream>(stream));
    // At exit the driver may be gone before the last stream: nothing to release then.
    if (r != CUDA_SUCCESS && r != CUDA_ERROR_DEINITIALIZED) cuda::check(r, "cuStreamDestroy");
  } catch (const std::exception& e) {
    std::cerr << "tessera: could not destroy a stream on " << d.str() << ": " << e.what() << "\n";
  }
}

void* gpu_device_stream(Device d) {
  return gpu_context(d).stream();
}

void gpu_stream_wait_stream(Device d, void* waiter, void* signaller) {
  if (waiter == signaller) return;
  const cuda::DeviceContext& ctx = gpu_context(d);
  const cuda::Event marker(ctx, static_cast<CUstream>(signaller));
  marker.make_wait(static_cast<CUstream>(waiter));
}

}  // namespace tessera::runtime

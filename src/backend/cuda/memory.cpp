#include "tessera/backend/cuda/memory.hpp"

#include <atomic>
#include <cstdint>
#include <iostream>

#include "tessera/backend/cuda/driver.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

namespace {
CUdeviceptr dptr(const void* p) {
  return reinterpret_cast<CUdeviceptr>(p);
}

std::string bytes_text(size_t bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  if (bytes >= (size_t{1} << 20)) return detail::cat(static_cast<double>(bytes) / kMiB, " MiB");
  return detail::cat(bytes, " bytes");
}
}  // namespace

void* device_allocate(const DeviceContext& ctx, size_t bytes) {
  ctx.make_current();
  // A zero-byte request still gets a distinct address, as from malloc.
  const size_t n = bytes == 0 ? 1 : bytes;
  CUdeviceptr p = 0;
  const std::string what =
      detail::cat("allocating ", bytes_text(n), " on GPU cuda:", ctx.ordinal());
  if (ctx.pool()) {
    TESSERA_CU_WHILE(what, cuMemAllocAsync, &p, n, ctx.stream());
  } else {
    TESSERA_CU_WHILE(what, cuMemAlloc, &p, n);
  }
  return reinterpret_cast<void*>(p);
}

void device_free(const DeviceContext& ctx, void* p) noexcept {
  if (!p) return;
  try {
    const DriverApi& api = driver();
    // At process exit the driver may shut down before the last tensor is dropped; the memory is
    // gone with it then, which is not worth a word.
    auto checked = [](CUresult r, const char* call) {
      if (r != CUDA_ERROR_DEINITIALIZED) check(r, call);
      return r == CUDA_SUCCESS;
    };
    if (!checked(api.cuCtxSetCurrent(ctx.context()), "cuCtxSetCurrent")) return;
    if (ctx.pool()) {
      checked(api.cuMemFreeAsync(dptr(p), ctx.stream()), "cuMemFreeAsync");
    } else if (checked(api.cuStreamSynchronize(ctx.stream()), "cuStreamSynchronize")) {
      // cuMemFree does not wait for queued work that may still use the memory: waited above.
      checked(api.cuMemFree(dptr(p)), "cuMemFree");
    }
  } catch (const std::exception& e) {
    // Once: after a kernel fault every free fails the same way.
    static std::atomic<bool> reported{false};
    if (!reported.exchange(true))
      std::cerr << "tessera: could not free GPU memory on cuda:" << ctx.ordinal() << ": "
                << e.what() << " (further failures to free are not reported)\n";
  }
}

void copy_host_to_device(const DeviceContext& ctx, void* device_dst, const void* host_src,
                         size_t bytes) {
  if (bytes == 0) return;
  ctx.make_current();
  TESSERA_CU(cuMemcpyHtoDAsync, dptr(device_dst), host_src, bytes, ctx.stream());
  TESSERA_CU(cuStreamSynchronize, ctx.stream());
}

void copy_device_to_host(const DeviceContext& ctx, void* host_dst, const void* device_src,
                         size_t bytes) {
  if (bytes == 0) return;
  ctx.make_current();
  TESSERA_CU(cuMemcpyDtoHAsync, host_dst, dptr(device_src), bytes, ctx.stream());
  TESSERA_CU(cuStreamSynchronize, ctx.stream());
}

void copy_device_to_device(const DeviceContext& ctx, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  ctx.make_current();
  TESSERA_CU(cuMemcpyDtoDAsync, dptr(dst), dptr(src), bytes, ctx.stream());
  TESSERA_CU(cuStreamSynchronize, ctx.stream());
}

void fill_bytes(const DeviceContext& ctx, void* p, unsigned char value, size_t bytes) {
  if (bytes == 0) return;
  ctx.make_current();
  TESSERA_CU(cuMemsetD8Async, dptr(p), value, bytes, ctx.stream());
}

uint64_t pool_reserved_bytes(const DeviceContext& ctx) {
  if (!ctx.pool()) return 0;
  cuuint64_t bytes = 0;
  TESSERA_CU(cuMemPoolGetAttribute, ctx.pool(), CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &bytes);
  return bytes;
}

void synchronize(const DeviceContext& ctx) {
  ctx.make_current();
  TESSERA_CU(cuStreamSynchronize, ctx.stream());
}

}  // namespace tessera::backend::cuda

#include "tessera/backend/cuda/memory.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
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

void* device_allocate(const DeviceContext& ctx, size_t bytes, CUstream stream) {
  ctx.make_current();
  // A zero-byte request still gets a distinct address, as from malloc.
  const size_t n = bytes == 0 ? 1 : bytes;
  CUdeviceptr p = 0;
  const CUresult r = ctx.pool() ? driver().cuMemAllocAsync(&p, n, stream ? stream : ctx.stream())
                                : driver().cuMemAlloc(&p, n);
  // Out of memory is the user's to handle (a smaller batch, freeing tensors): its own type,
  // naming the size and the device, like a host allocation that fails.
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail<OutOfMemoryError>("out of memory: ", n,
                           " bytes could not be allocated on cuda:", ctx.ordinal(),
                           "; use smaller tensors, or free some first");
  check(r, ctx.pool() ? "cuMemAllocAsync" : "cuMemAlloc",
        detail::cat("allocating ", bytes_text(n), " on GPU cuda:", ctx.ordinal()));
  return reinterpret_cast<void*>(p);
}

void device_free(const DeviceContext& ctx, void* p, CUstream stream) noexcept {
  if (!p) return;
  const CUstream queue = stream ? stream : ctx.stream();
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
      checked(api.cuMemFreeAsync(dptr(p), queue), "cuMemFreeAsync");
    } else if (checked(api.cuStreamSynchronize(queue), "cuStreamSynchronize")) {
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

void copy_finished_to_host(const DeviceContext& ctx, void* host_dst, const void* device_src,
                           size_t bytes) {
  if (bytes == 0) return;
  ctx.make_current();
  TESSERA_CU(cuMemcpyDtoH, host_dst, dptr(device_src), bytes);
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

void fill_elements(const DeviceContext& ctx, void* p, const void* element, size_t element_bytes,
                   size_t count) {
  if (count == 0) return;
  ctx.make_current();
  uint32_t word = 0;  // the element as 16 or 32 bits, or an 8-byte one whose halves agree
  std::memcpy(&word, element, std::min<size_t>(element_bytes, 4));
  const bool halves_agree =
      element_bytes == 8 && std::memcmp(element, static_cast<const char*>(element) + 4, 4) == 0;
  if (element_bytes == 1) return fill_bytes(ctx, p, static_cast<unsigned char>(word), count);
  if (element_bytes == 2)
    return TESSERA_CU(cuMemsetD16Async, dptr(p), static_cast<unsigned short>(word), count,
                      ctx.stream());
  if (element_bytes == 4 || halves_agree)
    return TESSERA_CU(cuMemsetD32Async, dptr(p), word, count * element_bytes / 4, ctx.stream());
  // Any other element: one copied from the host (the driver stages pageable memory before the
  // call returns), then doubling copies on the device: log2(count) copies, each byte written once.
  TESSERA_CU(cuMemcpyHtoDAsync, dptr(p), element, element_bytes, ctx.stream());
  const size_t total = count * element_bytes;
  for (size_t done = element_bytes; done < total; done *= 2)
    TESSERA_CU(cuMemcpyDtoDAsync, dptr(static_cast<char*>(p) + done), dptr(p),
               std::min(done, total - done), ctx.stream());
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

// Device memory and copies, all ordered on the device's one stream (context.hpp). Allocation and
// free are stream-ordered (cuMemAllocAsync / cuMemFreeAsync on the default pool): a free is queued
// behind the work already on the stream that may still use the memory, and the next allocation
// reuses it without a system call.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/backend/cuda/context.hpp"

namespace tessera::backend::cuda {

// `bytes` of device memory, usable by work queued on the device's stream from now on.
// `stream`: where the allocation is ordered (the device's own stream when null).
void* device_allocate(const DeviceContext& ctx, size_t bytes, CUstream stream = nullptr);
// Queues the release of `p` behind the work on the stream. Never throws: a failure (a driver
// already shut down at process exit, a context broken by a faulted kernel) is reported on stderr
// and the memory is left to the driver, since frees run from destructors.
void device_free(const DeviceContext& ctx, void* p, CUstream stream = nullptr) noexcept;

// Synchronous copies: queued on the stream behind earlier work, then waited for. `host` is
// ordinary (pageable) host memory.
void copy_host_to_device(const DeviceContext& ctx, void* device_dst, const void* host_src,
                         size_t bytes);
void copy_device_to_host(const DeviceContext& ctx, void* host_dst, const void* device_src,
                         size_t bytes);
// A synchronous copy that is not queued on the device's stream, so it does not wait for the work
// queued there: only for memory whose last writer is known to have finished (a launch's error
// report, once the launch's event has completed).
void copy_finished_to_host(const DeviceContext& ctx, void* host_dst, const void* device_src,
                           size_t bytes);
void copy_device_to_device(const DeviceContext& ctx, void* dst, const void* src, size_t bytes);
// Sets `bytes` bytes at `p` to `value`, queued on the stream (not waited for).
void fill_bytes(const DeviceContext& ctx, void* p, unsigned char value, size_t bytes);
// Sets `count` elements of `element_bytes` bytes each at `p` (aligned to the element) to the
// value at `element`, queued on the stream (not waited for; `element` may go away at return).
void fill_elements(const DeviceContext& ctx, void* p, const void* element, size_t element_bytes,
                   size_t count);

// Bytes the device's pool holds from the driver (in use or kept for reuse); 0 without a pool.
uint64_t pool_reserved_bytes(const DeviceContext& ctx);

// Waits for everything queued on the device's stream; throws BackendError for a failed kernel.
void synchronize(const DeviceContext& ctx);

}  // namespace tessera::backend::cuda

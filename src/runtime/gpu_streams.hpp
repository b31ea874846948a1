// Streams on a GPU besides the device's own (runtime/stream.hpp), and ordering between them: a
// stream waits for another's work on the device (an event), never on the host. Private to the
// runtime; implemented on backend/cuda in gpu_streams.cpp.
#pragma once

#include "tessera/runtime/device.hpp"

namespace tessera::runtime {

// A new stream on GPU `d` that does not wait for the legacy default stream (a CUstream, as void*).
void* gpu_create_stream(Device d);
// Releases a stream made by gpu_create_stream; work queued on it still finishes. Never throws.
void gpu_destroy_stream(Device d, void* stream) noexcept;
// The device's own stream, where allocations, copies, fills and frees are queued.
void* gpu_device_stream(Device d);
// Makes `waiter` wait, on the device, for the work queued on `signaller` so far. Nothing when they
// are the same stream.
void gpu_stream_wait_stream(Device d, void* waiter, void* signaller);

}  // namespace tessera::runtime

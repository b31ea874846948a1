// Streams: more than one queue of work per device. Launches on different streams may run at the
// same time; launches that touch the same storage are still ordered, whatever streams they are
// on, from the per-storage tracking of pending readers and writers (docs/async.md): a launch on
// one stream that reads what a launch on another writes waits for it on the device (an event),
// and the same for a write after a read and a write after a write. So choosing streams is never a
// way to race.
//
//   Stream side(gpu);
//   {
//     StreamScope on(side);                 // launches of this thread on gpu go to `side`
//     auto [a1, x1] = k(std::move(a), x).chain();
//   }
//   auto [b1, a2] = k2(std::move(b), std::move(a1).unpartition()).sync();  // waits for k, on the
//   GPU
//
// Without a scope, launches go to the device's own stream. On the CPU a stream is only a name:
// the CPU backend's workers order launches by storage alone.
#pragma once

#include <memory>

#include "tessera/runtime/device.hpp"

namespace tessera {

class Stream {
 public:
  // A new stream on `device` (on a GPU, a CUstream that does not wait for the legacy default
  // stream). Destroyed with its last copy; work queued on it still finishes.
  explicit Stream(Device device = default_device());
  // A stream made by other code, e.g. PyTorch's current stream
  // (torch.cuda.current_stream().cuda_stream, a CUstream, as void*), on GPU `device`. Unchecked:
  // the caller keeps the stream alive while this Stream and any launch on it lives; Tessera never
  // destroys it. Work that other code queues on it is ordered with Tessera's launches on it by
  // the stream itself; Tessera does not see that work, so it orders nothing else around it.
  static Stream adopt_unchecked(Device device, void* cu_stream);

  Device device() const;
  // The CUstream, as void*; null on the CPU.
  void* native() const;

  struct State;  // src/runtime/stream.cpp

 private:
  explicit Stream(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
  friend class StreamScope;
};

// While it lives, the launches this thread makes on the stream's device go to that stream.
// Scopes nest: the innermost one for a device wins, and the one before it is back at its end.
// The scope keeps the stream alive.
class StreamScope {
 public:
  explicit StreamScope(const Stream& stream);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  std::shared_ptr<Stream::State> state_;
};

namespace runtime {
class TensorHandle;

// The stream this thread's launches on `d` go to (a CUstream as void*), or null for the device's
// own stream.
void* current_stream(Device d);
// For launchers that queue on the device's own stream without being ordered by the storage
// tracking (the SIMT path): makes the device's stream wait, on the device, for the pending
// launches on other streams that `h`'s storage must follow (its writer; and its readers when
// `written`). Does nothing on the CPU.
void order_device_stream_after_pending(const TensorHandle& h, bool written);
}  // namespace runtime

}  // namespace tessera

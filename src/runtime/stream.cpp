#include "tessera/runtime/stream.hpp"

#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/tensor_handle.hpp"

#include "gpu_streams.hpp"
#include "pending_access.hpp"

namespace tessera {

struct Stream::State {
  Device device = Device::cpu();
  void* stream = nullptr;  // a CUstream; null on the CPU
  bool owned = false;      // made here, so destroyed here
  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (owned) runtime::gpu_destroy_stream(device, stream);
  }
};

Stream::Stream(Device device) : state_(std::make_shared<State>()) {
  state_->device = device;
  if (device.is_cuda()) {
    runtime::require_gpu(device);
    state_->stream = runtime::gpu_create_stream(device);
    state_->owned = true;
  }
}

Stream Stream::adopt_unchecked(Device device, void* cu_stream) {
  if (!device.is_cuda())
    fail<UsageError>("Stream::adopt_unchecked: ", device.str(),
                     " is not a GPU; a foreign stream is a CUstream of a GPU, and the CPU needs "
                     "none: use Stream(Device::cpu())");
  if (!cu_stream)
    fail<UsageError>(
        "Stream::adopt_unchecked: the CUstream is null (the legacy default stream); "
        "pass a stream made with cuStreamCreate (or PyTorch's "
        "torch.cuda.current_stream().cuda_stream when it is not the default one)");
  runtime::require_gpu(device);
  auto state = std::make_shared<State>();
  state->device = device;
  state->stream = cu_stream;
  return Stream(std::move(state));
}

Device Stream::device() const {
  return state_->device;
}
void* Stream::native() const {
  return state_->stream;
}

namespace {
// The scopes open on this thread, innermost last.
thread_local std::vector<std::shared_ptr<Stream::State>> t_scopes;
}  // namespace

StreamScope::StreamScope(const Stream& stream) : state_(stream.state_) {
  t_scopes.push_back(state_);
}

StreamScope::~StreamScope() {
  // Scopes are objects with automatic lifetimes, so they end innermost first; erase the last
  // occurrence all the same, in case one was moved into a longer-lived place.
  for (size_t i = t_scopes.size(); i-- > 0;)
    if (t_scopes[i] == state_) {
      t_scopes.erase(t_scopes.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
}

namespace runtime {

void* current_stream(Device d) {
  if (!d.is_cuda()) return nullptr;
  for (size_t i = t_scopes.size(); i-- > 0;)
    if (t_scopes[i]->device == d) return t_scopes[i]->stream;
  return nullptr;
}

void order_device_stream_after_pending(const TensorHandle& h, bool written) {
  if (h.empty() || !h.device().is_cuda()) return;
  const Predecessors before = PendingAccess::predecessors({{h.storage(), written}});
  if (before.empty()) return;  // nothing pending: nothing to ask of the device
  void* device_stream = gpu_device_stream(h.device());
  for (const std::shared_ptr<Completion>& c : before.writers) c->order_on(device_stream);
  for (const std::shared_ptr<Completion>& c : before.readers) c->order_on(device_stream);
}

}  // namespace runtime

}  // namespace tessera

// The backends there are (tessera/backend/backend.hpp): the CPU's from the start, others as their
// targets register them.
#include <array>
#include <atomic>
#include <vector>

#include "tessera/backend/backend.hpp"
#include "tessera/backend/cpu/backend.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend {

namespace {
// Indexed by DeviceKind. Read on every launch, so without a lock.
struct Registry {
  std::array<std::atomic<const Backend*>, 2> by_kind{&cpu::backend(), nullptr};
};
// Built on first use: a backend's registration may run before main, in any order.
Registry& registry() {
  static Registry r;
  return r;
}
size_t slot(DeviceKind kind) {
  return static_cast<size_t>(kind);
}
}  // namespace

const Backend& backend_for(DeviceKind kind, SourceLoc where) {
  if (const Backend* b = registry().by_kind.at(slot(kind)).load(std::memory_order_acquire))
    return *b;
  fail_at<UsageError>(
      where, "no backend for ", kind == DeviceKind::CUDA ? "CUDA GPUs" : "this device",
      " is linked into this program: tile kernels run on a GPU through the CUDA backend, which "
      "the CMake target Tessera::tessera links (a program linked with Tessera::simt only has "
      "none); link Tessera::tessera, or run on the CPU (TESSERA_DEVICE=cpu)");
}

void register_backend(DeviceKind kind, const Backend& b) {
  registry().by_kind.at(slot(kind)).store(&b, std::memory_order_release);
}

std::vector<const Backend*> registered_backends() {
  std::vector<const Backend*> out;
  for (const std::atomic<const Backend*>& s : registry().by_kind)
    if (const Backend* b = s.load(std::memory_order_acquire)) out.push_back(b);
  return out;
}

}  // namespace tessera::backend

// Until the CUDA backend lands, no GPU is usable and every GPU operation says so.
#include "tessera/runtime/gpu.hpp"

#include "tessera/core/error.hpp"

namespace tessera::runtime {

namespace {
constexpr const char* kNoGpu = "this build of Tessera has no CUDA backend yet";
}

bool gpu_usable(std::string* why) {
  if (why) *why = kNoGpu;
  return false;
}

void require_gpu(Device d) {
  fail<UsageError>("device ", d.str(), " was asked for, but ", kNoGpu,
                   "; use TESSERA_DEVICE=cpu");
}

void* gpu_allocate(Device d, size_t) {
  require_gpu(d);
  return nullptr;
}
void gpu_free(Device, void*) {}
void gpu_copy_to_device(Device d, void*, const void*, size_t) { require_gpu(d); }
void gpu_copy_to_host(Device d, void*, const void*, size_t) { require_gpu(d); }

}  // namespace tessera::runtime

#include "tessera/runtime/device.hpp"

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <mutex>

#include "tessera/core/error.hpp"
#include "tessera/runtime/gpu.hpp"

namespace tessera {

Device Device::parse(std::string_view text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.starts_with("cuda:")) {
    int index = -1;
    const std::string_view digits = text.substr(5);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec == std::errc() && end == digits.data() + digits.size() && index >= 0)
      return cuda(index);
  }
  fail<UsageError>("'", text, "' is not a device; write cpu, cuda or cuda:N");
}

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(index_);
}

Device default_device() {
  static const Device device = [] {
    if (const char* env = std::getenv("TESSERA_DEVICE"); env && *env) {
      Device d = Device::parse(env);
      if (d.is_cuda()) runtime::require_gpu(d);  // a GPU asked for by name must be there
      return d;
    }
    std::string why;
    if (runtime::gpu_usable(&why)) return Device::cuda(0);
    std::cerr << "tessera: no usable GPU (" << why << "); running on the CPU backend\n";
    return Device::cpu();
  }();
  return device;
}

}  // namespace tessera

// Devices. The CPU reference backend is always there; CUDA devices are GPUs the driver reports.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera {

enum class DeviceKind : uint8_t { CPU, CUDA };

class Device {
 public:
  static Device cpu() { return Device(DeviceKind::CPU, 0); }
  static Device cuda(int index = 0) { return Device(DeviceKind::CUDA, index); }
  // "cpu", "cuda", "cuda:N"; throws UsageError otherwise.
  static Device parse(std::string_view text);

  DeviceKind kind() const { return kind_; }
  int index() const { return index_; }
  bool is_cpu() const { return kind_ == DeviceKind::CPU; }
  bool is_cuda() const { return kind_ == DeviceKind::CUDA; }
  std::string str() const;
  friend bool operator==(const Device&, const Device&) = default;

 private:
  Device(DeviceKind k, int i) : kind_(k), index_(i) {}
  DeviceKind kind_;
  int index_;
};

// TESSERA_DEVICE (cpu | cuda | cuda:N) when set; else the first usable GPU; else the CPU, with a
// one-line notice on stderr the first time. Resolved once per process.
Device default_device();

}  // namespace tessera

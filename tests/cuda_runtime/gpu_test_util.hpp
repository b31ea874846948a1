// Helpers of the GPU tests: a fixture that needs a usable GPU, device buffers, and hand-written
// kernels that follow abi.hpp.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tessera/backend/cuda/abi_source.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/launch.hpp"

namespace tessera::test {

// GPU tests fail (not skip) without a usable GPU: label gpu means one is needed, and a skip on
// the GPU machine would hide a broken setup.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    ASSERT_TRUE(runtime::gpu_usable(&why)) << "this test needs a GPU: " << why;
  }
  Device gpu() const { return Device::cuda(0); }
};

// Device memory for the length of a test.
class DeviceBuffer {
 public:
  DeviceBuffer(Device d, size_t bytes)
      : device_(d), bytes_(bytes), data_(runtime::gpu_allocate(d, bytes)) {}
  template <class T>
  DeviceBuffer(Device d, const std::vector<T>& host) : DeviceBuffer(d, host.size() * sizeof(T)) {
    runtime::gpu_copy_to_device(device_, data_, host.data(), bytes_);
  }
  ~DeviceBuffer() { runtime::gpu_free(device_, data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  template <class T>
  std::vector<T> download() const {
    std::vector<T> host(bytes_ / sizeof(T));
    runtime::gpu_copy_to_host(device_, host.data(), data_, host.size() * sizeof(T));
    return host;
  }

 private:
  Device device_;
  size_t bytes_;
  void* data_;
};

// A kernel named `entry` whose source is abi.hpp followed by `body`.
inline runtime::GpuKernelSource abi_kernel(const std::string& entry, const std::string& body,
                                           std::vector<runtime::GpuParam> params, int threads = 256,
                                           size_t shared = 0) {
  runtime::GpuKernelSource k;
  k.name = entry;
  k.entry = entry;
  k.source = std::string(backend::cuda::abi_source()) + body;
  k.threads_per_block = threads;
  k.dynamic_shared_bytes = shared;
  k.params = std::move(params);
  return k;
}

inline backend::ArgValue tensor_arg(const DeviceBuffer& b, DType dtype, Shape shape,
                                    Shape strides = {}) {
  if (strides.empty()) strides = row_major_strides(shape);
  backend::ArgValue v;
  v.tensor = backend::TensorArg{b.data(), dtype, std::move(shape), std::move(strides)};
  return v;
}

// y = a * x + y, one element per thread, over rank-1 tensors of any stride.
inline const char* kAxpy = R"(
extern "C" __global__ void axpy(TesseraGrid grid, TesseraTensorRef y, TesseraTensorRef x, float a) {
  for (tessera_i64 b = blockIdx.x; b < grid.total; b += gridDim.x) {
    tessera_i64 i = b * blockDim.x + threadIdx.x;
    if (i < y.shape[0])
      ((float*)y.data)[i * y.strides[0]] += a * ((const float*)x.data)[i * x.strides[0]];
  }
}
)";

inline std::vector<runtime::GpuParam> axpy_params() {
  return {{ir::ParamKind::Out, DType::F32},
          {ir::ParamKind::In, DType::F32},
          {ir::ParamKind::Scalar, DType::F32}};
}

}  // namespace tessera::test

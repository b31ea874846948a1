// expect-error: private
// expect-error: data
// Class 1 of issue 10: data() on a tensor's handle returned a mutable pointer, which could be kept
// before partitioning and written by another thread during the launch. A handle shows its address
// only as a number (address(), for alignment and overlap checks); the pointer is private. GCC says
// "'void* tessera::runtime::TensorHandle::data() const' is private within this context", clang
// "'data' is a private member of 'tessera::runtime::TensorHandle'". The twin reads the address as
// a number.
#include <cstdint>

#include <tessera/tessera.hpp>

using namespace tessera;

uintptr_t run(const Tensor<float, 1>& x) {
#ifdef TESSERA_COMPILE_FAIL
  float* p = static_cast<float*>(x.handle().data());
  p[0] = 1.0f;
#endif
  return x.handle().address();
}

// expect-error: private
// expect-error: TensorHandle
// Class 1 of issue 10: copying an input's handle (Tensor::handle() is const) gave a handle of its
// own that could fill() the input while a kernel read it. A handle's copy constructor is private
// (only a Tensor copy, which cannot write, makes one), and so are its writers. GCC says "... is
// private within this context", clang "calling a private constructor of class
// 'tessera::runtime::TensorHandle'". The twin copies the Tensor, which shares the storage and can
// only read it.
#include <tessera/tessera.hpp>

using namespace tessera;

float run(const Tensor<float, 1>& x) {
#ifdef TESSERA_COMPILE_FAIL
  runtime::TensorHandle copy = x.handle();
  copy.fill(0.0f);
#endif
  const Tensor<float, 1> copy_of_tensor = x;
  return copy_of_tensor.to_vector().at(0);
}

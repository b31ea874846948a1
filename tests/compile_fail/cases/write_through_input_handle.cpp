// expect-error: private
// expect-error: fill
// A tensor's handle shows what the tensor is, not its memory: writing through it (here, an input
// that kernels are reading) does not compile, whatever the handle's constness; the twin reads the
// tensor through the tensor. GCC says "'void tessera::runtime::TensorHandle::fill(double)' is
// private within this context", clang "'fill' is a private member of
// 'tessera::runtime::TensorHandle'": the test matches what they share.
#include <tessera/tessera.hpp>

using namespace tessera;

float run(const Tensor<float, 1>& x) {
#ifdef TESSERA_COMPILE_FAIL
  x.handle().fill(0.0);
#endif
  float first = 0;
  const std::vector<float> all = x.to_vector();
  if (!all.empty() && x.handle().use_count() > 0) first = all[0];
  return first;
}

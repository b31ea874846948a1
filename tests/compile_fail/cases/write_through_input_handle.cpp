// expect-error: 'this' argument
// expect-error: runtime::TensorHandle'
// A tensor's handle is read-only from outside: writing through it (here, an input that kernels are
// reading) does not compile; the twin reads through it. GCC says "passing 'const
// tessera::runtime::TensorHandle' as 'this' argument discards qualifiers", clang "'this' argument
// to member function 'fill' has type 'const runtime::TensorHandle', but function is not marked
// const": the test matches what they share.
#include <tessera/tessera.hpp>

using namespace tessera;

float run(const Tensor<float, 1>& x) {
#ifdef TESSERA_COMPILE_FAIL
  x.handle().fill(0.0);
#endif
  float first = 0;
  std::vector<float> all(static_cast<size_t>(x.numel()));
  x.handle().read_to_host(all.data());
  if (!all.empty()) first = all[0];
  return first;
}

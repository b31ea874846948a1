// expect-error: passing 'const tessera::runtime::TensorHandle' as 'this' argument discards qualifiers
// A tensor's handle is read-only from outside: writing through it (here, an input that kernels are
// reading) does not compile; the twin reads through it (GCC's wording).
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

// expect-error: no member named 'data'
// Class 1 of issue 10: a raw mutable pointer to a tensor's elements comes only through a name that
// says so, unchecked_data(), which marks the storage escaped (no launch writes it again). There is
// no data(). GCC says "... has no member named 'data'", clang "no member named 'data' in
// 'tessera::Tensor<float, 1>'". The twin takes the pointer the unchecked way.
#include <tessera/tessera.hpp>

using namespace tessera;

float run() {
  auto t = ones<float>({8}, Device::cpu());
#ifdef TESSERA_COMPILE_FAIL
  float* p = t.data();
  (void)p;
#endif
  const float* q = t.unchecked_data();
  return q[0];
}

// expect-error: private
// Class 1 of issue 10: caller memory becomes a tensor only through wrap_unowned_unchecked (whose
// name says what the caller promises); Storage's constructor over caller memory is private. GCC
// says "... is private within this context", clang "calling a private constructor of class
// 'tessera::runtime::Storage'". The twin wraps the memory the unchecked way.
#include <memory>

#include <tessera/tessera.hpp>

using namespace tessera;

int64_t run(float* buffer) {
#ifdef TESSERA_COMPILE_FAIL
  runtime::Storage storage(Device::cpu(), static_cast<void*>(buffer), 64 * sizeof(float));
  (void)storage;
#endif
  return wrap_unowned_unchecked(buffer, {64}).numel();
}

// expect-error: private
// Class 1 of issue 10: building a Tensor straight from a partition's handle (the launchers' read
// access gives a const reference to it). A Tensor is built from a handle only by its friends: the
// creation functions (over new storage), Partition::unpartition() and Tensor itself. GCC says
// "... is private within this context", clang "calling a private constructor of class
// 'tessera::Tensor<float, 1>'". The twin reads the partition's shape through the same access.
#include <tessera/tessera.hpp>

using namespace tessera;

int64_t run() {
  auto p = zeros<float>({64}, Device::cpu()).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  Tensor<float, 1> alias(runtime::HandleAccess::of(p));
  (void)alias;
#endif
  const int64_t n = runtime::HandleAccess::of(p).numel();
  (void)std::move(p).unpartition();
  return n;
}

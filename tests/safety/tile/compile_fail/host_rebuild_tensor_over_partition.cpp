// expect-error: 'make' is not a member || no member named 'make'
// Class 1 of issue 10: a public helper (HandleAccess::make) rebuilt a live Tensor over a
// partition's handle, so another thread could read torn tiles, or launch a second kernel on it,
// while the first ran. The launchers' HandleAccess only reads a handle; tensors are built over new
// storage only (NewTensor). GCC says "'make' is not a member of 'tessera::runtime::HandleAccess'",
// clang "no member named 'make' in 'tessera::runtime::HandleAccess'". The twin gets the tensor
// back the one legal way, unpartition().
#include <tessera/tessera.hpp>

using namespace tessera;

std::vector<float> run() {
  auto p = zeros<float>({64}, Device::cpu()).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  auto alias = runtime::HandleAccess::make<Tensor<float, 1>>(runtime::HandleAccess::of(p));
  (void)alias;
#endif
  return std::move(p).unpartition().to_vector();
}

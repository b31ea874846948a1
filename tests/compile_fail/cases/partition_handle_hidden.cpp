// expect-error: no member named 'handle'
// A partition hands out no handle to its storage, so no second owner can reach the tiles that
// kernels write; the twin asks only for the storage's identity.
#include <tessera/tessera.hpp>

using namespace tessera;

bool run() {
  auto p = zeros<float>({64}, Device::cpu()).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  runtime::TensorHandle second = p.handle();
  (void)second;
#endif
  const bool alive = p.storage() != nullptr;
  (void)std::move(p).unpartition();
  return alive;
}

// expect-error: no member named 'data'
// Class 1 of issue 10: a partition's storage() handed out data(), a mutable pointer into the tiles
// that kernels write. Storage shows its device, size and whether it escaped, never its address.
// GCC says "... has no member named 'data'", clang "no member named 'data' in
// 'tessera::runtime::Storage'". The twin asks the storage for its size.
#include <tessera/tessera.hpp>

using namespace tessera;

size_t run() {
  auto p = zeros<float>({64}, Device::cpu()).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  float* tiles = static_cast<float*>(p.storage()->data());
  tiles[0] = 1.0f;
#endif
  const size_t bytes = p.storage()->bytes();
  (void)std::move(p).unpartition();
  return bytes;
}

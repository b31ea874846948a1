// expect-error: partition() consumes the tensor, so that no other handle can reach the storage that kernels will write: write std::move(t).partition(tile)
// partition() called on a tensor that stays usable afterwards.
#include <tessera/tessera.hpp>

using namespace tessera;

void run() {
  auto t = zeros<float>({64});
#ifdef TESSERA_COMPILE_FAIL
  t.partition({16});
#else
  std::move(t).partition({16});
#endif
}

// expect-error: use of deleted function 'tessera::Partition<T, R>::Partition(const tessera::Partition<T, R>&)
// A copy of a partition would be a second handle that writes the same tiles (GCC's wording).
#include <tessera/tessera.hpp>

using namespace tessera;

void run() {
  auto p = zeros<float>({64}).partition({16});
#ifdef TESSERA_COMPILE_FAIL
  auto q = p;
#else
  auto q = std::move(p);
#endif
  (void)std::move(q).unpartition();
}

// expect-error: deleted
// expect-error: Partition<
// A copy of a partition would be a second handle that writes the same tiles. The copy constructor
// is deleted (so std::is_copy_constructible says no, which tuples and futures rely on), and every
// compiler names it: "use of deleted function 'tessera::Partition<T, R>::Partition(const
// ...)" (GCC), "call to deleted constructor of 'Partition<float, 1>'" (clang).
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

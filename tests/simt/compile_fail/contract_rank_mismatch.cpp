// expect-error: the rank of the kernel's contract (contract<R>()) is not the rank of its witness
// A 2-D witness under a 1-D contract: the contract would accept launches the witness is not unique
// under.
#include <tessera/simt/launch.hpp>

using namespace tessera::simt;

#ifdef TESSERA_COMPILE_FAIL
TESSERA_SIMT_KERNEL(k, Index2D w, DisjointSpan2D<float> out) {
  return contract<1>();
};
#else
TESSERA_SIMT_KERNEL(k, Index2D w, DisjointSpan2D<float> out) {
  return contract<2>();
};
#endif

void run(const Module& m) {
  (void)prepare<k>(m, LaunchConfig<k::launch_contract().kRank>{});
}

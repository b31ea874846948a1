// expect-error: DisjointSpan<T>::at() takes the thread's Index1D or WarpIndex1D
// Mixing index spaces: (row, col) of a 2-D launch used as the index of a 1-D output would give
// element `row` of `flat` to every thread of that row.
#include <tessera/simt/kernel.hpp>

using namespace tessera::simt;

TESSERA_SIMT_KERNEL(k, Index2D w, DisjointSpan<float> flat, DisjointSpan2D<float> grid) {
  return contract<2>();
};

TESSERA_SIMT_DEFINE(k, Index2D w, DisjointSpan<float> flat, DisjointSpan2D<float> grid) {
#ifdef TESSERA_COMPILE_FAIL
  if (auto o = flat.at(w)) *o = 1.0f;
#else
  if (auto o = grid.at(w)) *o = static_cast<float>(flat.size());
#endif
}

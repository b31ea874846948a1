// The body of stale_add as it was compiled before its declaration changed (stale_kernel.hpp): it
// writes x, which the host now passes as an input that other arguments may share.
#define TESSERA_STALE_DECLARATION
#include "stale_kernel.hpp"

namespace safety_stale {

TESSERA_SIMT_DEFINE(stale_add, Index1D i, DisjointSpan<float> out, DisjointSpan<float> x) {
  if (auto o = out.at(i)) *o = 1.0f;
  if (auto o = x.at(i)) *o = 2.0f;
}

}  // namespace safety_stale

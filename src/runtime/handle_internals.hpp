// What the runtime's own launchers may do with a handle and users may not: take the address of
// its elements to hand to a backend. Declared a friend by TensorHandle, defined only here, outside
// include/: no public header reaches it.
#pragma once

#include "tessera/runtime/tensor_handle.hpp"

namespace tessera::runtime {

class HandleInternals {
 public:
  // The address of element [0, ..., 0], for a launch that owns (or reads) the argument: not an
  // escape, since the launch's future holds the handle until the work is done.
  static void* data(const TensorHandle& h) { return h.data(); }
};

}  // namespace tessera::runtime

// The test kernels, compiled ahead of time (tessera_add_simt_kernels in CMakeLists.txt): the
// declarations first, then the bodies (which NVRTC compiles on their own, after declarations it
// writes from the host's types).
#include "test_kernels.hpp"

#include "test_kernels.cuh"

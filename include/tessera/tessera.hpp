// Tessera: GPU kernels that cannot race. Host side in namespace tessera (Tensor, zeros, ones,
// devices); kernel side in tessera::tile (Out, In, Scalar, load, mma, for_range, ...).
#pragma once

#include "tessera/core/dtype.hpp"
#include "tessera/core/error.hpp"
#include "tessera/runtime/device.hpp"
#include "tessera/runtime/dlpack.hpp"
#include "tessera/runtime/kernel.hpp"
#include "tessera/runtime/tensor.hpp"
#include "tessera/tile/control.hpp"
#include "tessera/tile/params.hpp"
#include "tessera/tile/tile.hpp"

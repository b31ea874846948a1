// The calling convention between the host launcher and generated kernels. This header is plain C
// structs so that it compiles both into the library and, embedded, under NVRTC.
//
// A generated kernel is
//   extern "C" __global__ void <entry>(TesseraGrid grid, <one argument per kernel parameter>)
// where an Out or In parameter is passed as a TesseraTensorRef and a Scalar as its own C type
// (float, double, int, ...; f16/bf16 as their 16-bit pattern, unsigned short). The launch is 1-D:
// blockIdx.x enumerates tile blocks in row-major order of grid.tiles; a kernel whose block count
// exceeds gridDim.x loops over blockIdx.x + k * gridDim.x.
#pragma once

#define TESSERA_MAX_RANK 4

#ifdef __CUDACC_RTC__
typedef long long tessera_i64;
#else
#include <cstdint>
typedef int64_t tessera_i64;
#endif

struct TesseraTensorRef {
  void* data;                             // element [0, ..., 0]
  tessera_i64 shape[TESSERA_MAX_RANK];    // extents; unused axes are 1
  tessera_i64 strides[TESSERA_MAX_RANK];  // in elements; unused axes are 0
};

// A TMA descriptor (the driver's CUtensorMap: 128 opaque bytes, 64-byte aligned), encoded by the
// host at launch for kernels that copy tiles with the tensor-memory accelerator (sm_90). Such a
// kernel takes them after its own parameters, as `const __grid_constant__ TesseraTensorMap`.
struct alignas(64) TesseraTensorMap {
  unsigned long long opaque[16];
};

struct TesseraGrid {
  tessera_i64 tiles[TESSERA_MAX_RANK];  // tile blocks along each axis; unused axes are 1
  tessera_i64 total;                    // product of tiles
};

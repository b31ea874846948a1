// IR -> CUDA C++. The generated source is one self-contained translation unit: our device runtime
// (embedded in the library) followed by the kernel, which follows the calling convention of
// abi.hpp and reads like the IR: one statement (or unrolled loop) per IR op.
#pragma once

#include <string>
#include <vector>

#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/backend/cuda/tensor_map.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::backend::cuda {

// What the launch guarantees about a tensor parameter beyond its dtype and rank. Part of the
// specialization key, so the generated code may rely on it.
struct TensorSpec {
  bool inner_unit_stride = false;  // the innermost axis has stride 1
  // The largest of 16, 8, 4, 2, 1 bytes that divides the base address and every outer stride
  // (in bytes): vector accesses of this width never straddle rows or misalign.
  int vector_bytes = 1;
  // The innermost extent, in bytes, is a multiple of vector_bytes: a vector access that starts
  // at a multiple of its width lies wholly inside the tensor or wholly outside, never across.
  bool inner_extent_aligned = false;
};

struct KernelSpec {
  Arch arch;
  std::vector<TensorSpec> tensors;  // one per kernel parameter (ignored for Scalar parameters)
  // On sm_90+: each kernel waits for the grids before it on the stream before its first global
  // access and lets the next grid start early (programmatic dependent launch). Off under
  // TESSERA_PDL=0 (programmatic_launch_enabled()): then the code has neither instruction.
  bool grid_dependency_control = true;
  // With grid_dependency_control: each prefetch op warms L2 with its tensor before the wait (see
  // Emitter::l2_prefetches). The backend sets it from l2_prefetch_enabled(): on unless
  // TESSERA_AB_PREFETCH=0.
  bool l2_prefetch = true;
  // A kernel planned without an occupancy bound issues its independent input loads before it
  // first waits on one (load_order.hpp). Off under TESSERA_AB_LOAD_ORDER=0
  // (load_order_enabled()).
  bool issue_loads_first = true;
};

struct EmittedKernel {
  std::string source;       // complete, self-contained translation unit for NVRTC
  std::string entry;        // extern "C" kernel name
  int threads = 128;        // threads per block
  int blocks_per_tile = 1;  // blocks that run one tile (LayoutPlan::blocks_per_tile)
  size_t shared_bytes = 0;  // dynamic shared memory per block
  // Whether the kernel has a check that can fail at run time (an unpadded load, a loop step
  // known only then) and so writes the module's error report; if not, the host never reads it.
  bool reports_errors = false;
  // Passed after the kernel's parameters, in this order (a pipelined mma loop on sm_90a).
  std::vector<TensorMapSpec> tensor_maps;
  // The kernel loops over the tiles itself, so the launch needs no more than this many blocks per
  // multiprocessor (a persistent grid); 0: one block per tile (LayoutPlan::blocks_per_sm).
  int blocks_per_sm = 0;
  // The kernel waits for the grids before it on its stream (griddepcontrol.wait, sm_90+) before
  // its first global access, so it may be launched with programmatic stream serialization: the
  // launch then overlaps the previous kernel's tail (LaunchConfig::programmatic_serialization).
  bool waits_for_prior_grids = false;
  // The lowered form the code was emitted from (lowered.hpp: layouts as types, conversions as
  // ops), as text: TESSERA_DUMP=layouts. Empty for the attention lowering, which has its own.
  std::string layouts;
};

// Throws KernelError (at the op's location) for IR the backend cannot lower.
EmittedKernel emit(const ir::Function& f, const KernelSpec& spec);

}  // namespace tessera::backend::cuda

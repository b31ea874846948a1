// Where the elements of each tile value live on the GPU (DESIGN §6). The IR says what a tile is;
// this pass decides, per value, how the CUDA block's threads hold it, and which operands must be
// converted from one layout to another before an op can use them. The emitter only follows the
// plan: it never picks a layout itself.
//
// The block has `threads` (T) threads; `vec` (V) is the kernel-wide vector width in elements.
//   Uniform      every element is equal (scalars, constants, broadcasts of them); every thread
//                holds the one value. Rank-0 values are always uniform.
//   Distributed  a tile of N elements in registers: thread t holds the row-major elements
//                (k*T + t)*V + v for k < ceil(N / (T*V)), v < V. Elementwise work, 16-byte
//                accesses, free reshapes.
//   Slice        the result of reducing a distributed tile of shape `parent` along its last axis:
//                register k of thread t holds the result for the row that contains the parent's
//                vector k*T + t, so broadcasting it back over `parent` is free.
//   MmaAcc       an mma.sync accumulator: 16x8 fragments, the block's warps tiled over [M, N]
//                (see MmaTiling); it stays in fragments across loop iterations.
//   Shared       a load whose only user is an mma operand, or a permute (load_t): that op lands
//                it in shared memory directly, and it has no registers.
// Conversions between register layouts go through shared memory; converting from Uniform is a
// fill. Conversions to Uniform only happen for single-element values (a reshape to rank 0).
//
// Before: f is promoted (no local ops) and verified. After: every value has a layout; every
// operand whose layout differs from what its op reads has an entry in `convert`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/cuda/pipeline.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::backend::cuda {

enum class LayoutKind : uint8_t { Uniform, Distributed, Slice, MmaAcc, Shared };

struct Layout {
  LayoutKind kind = LayoutKind::Uniform;
  Shape parent;  // Slice: the shape of the tile that was reduced (along its last axis)
  friend bool operator==(const Layout&, const Layout&) = default;
};
std::string to_string(const Layout& l);

// How the warps of a block tile an mma accumulator of shape [m, n]: a warps_m x warps_n grid of
// warps, each holding frags_m x frags_n fragments of 16x8 (rows x cols). The covered region
// (rows() x cols()) may exceed [m, n]; the excess computes on zero padding and is never stored.
struct MmaTiling {
  int m = 0, n = 0;
  int warps_m = 1, warps_n = 1;
  int frags_m = 1, frags_n = 1;
  int rows() const { return warps_m * frags_m * 16; }
  int cols() const { return warps_n * frags_n * 8; }
  int registers() const { return frags_m * frags_n * 4; }
};
MmaTiling mma_tiling(const Shape& acc, int threads);

// mma runs on tensor cores (mma.sync m16n8k16) for f16/bf16 operands, and (m16n8k8) for f32
// operands the user asked to round to TF32 (`tf32`, ir::Attrs::tf32); other operand types take a
// CUDA-core loop that is correct but not fast.
bool mma_on_tensor_cores(DType operand, bool tf32 = false);

// Elements per global-memory access of a tile of `tile` shape of a tensor with `spec`: the
// largest power of two that fits 16 bytes, the tensor's alignment and `limit`, divides the tile's
// innermost extent, and is at least 4 bytes wide; else 1 (scalar accesses).
int vector_chunk(DType dtype, const TensorSpec& spec, const Shape& tile, int limit);

struct LayoutPlan {
  int threads = 32;  // T: the threads that hold a tile (its thread ids are 0..T-1)
  int vec = 1;       // V
  // S: the blocks that run one tile, T / S threads each. Above 1 only for a kernel of
  // elementwise ops, whose threads never read each other's values (no shared memory, shuffles or
  // barriers): a large tile then runs as several blocks of at most 512 threads.
  int blocks_per_tile = 1;
  // Blocks each multiprocessor should be able to hold at once (__launch_bounds__' second
  // argument, which caps registers at 64K / (min_blocks * T)); 0 leaves it to the compiler.
  int min_blocks = 0;
  // A grid of at most this many blocks per multiprocessor, each looping over tiles (so that
  // per-tile setup is paid once per block); 0: one block per tile (EmittedKernel::blocks_per_sm).
  int blocks_per_sm = 0;
  // A one-pass row-wise kernel under an occupancy bound that issues its independent loads (a
  // norm's weight and bias rows) before its first reduction, as the other kernels do, instead of
  // a vector at a time in its epilogue (codegen.cpp, emit; load_order.hpp).
  bool loads_first = false;
  // A row-wise kernel whose rows do not fit its threads' registers (more than 32 elements a
  // thread): the code generator re-reads what it can from the (read-only) inputs at each use and
  // reduces it a few vectors at a time (stream_group), instead of holding the row
  // (Emitter::plan_streaming).
  bool stream_rows = false;
  // A streamed pass (and the epilogue, Emitter::epilogue_start) covers this many vectors a step,
  // under one whole-tile test, so that their loads are in flight together; 1: one at a time.
  int stream_group = 1;
  int epilogue_group = 1;
  // A streamed row's input loads that more than one pass reads are kept, as the first pass read
  // them, in shared memory (each thread its own vectors), and the later passes read them there:
  // the row crosses the memory bus once (Emitter::plan_stash), where shared memory holds it.
  bool stash_streamed = false;
  // A persistent row-wise kernel's row load also prefetches into L2 the block's row this many
  // iterations ahead (Emitter::prefetch_next_tile); 0: none.
  int64_t prefetch_next_tile = 0;
  std::vector<Layout> of;  // by ValueId
  // (op, operand index) -> the layout the op reads that operand in, when it differs from the
  // operand's own layout.
  std::map<std::pair<const ir::Op*, size_t>, Layout> convert;
  // The mma loop lowered as a software pipeline, if any (find_mma_pipeline). Its consumer
  // warpgroups are the T threads; the producer warpgroup comes on top.
  std::optional<MmaPipeline> pipeline;

  // How the warps tile an mma accumulator of `shape`: wgmma's (each warp 16 full rows) for the
  // pipeline's accumulator shape, else mma_tiling's.
  MmaTiling tiling(const Shape& shape) const;

  // Registers each thread spends on a value of `shape` in layout l (Uniform: 1, Shared: 0).
  int registers(const Layout& l, const Shape& shape) const;
  // Per-thread register vectors of a distributed tile of n elements: ceil(n / (T*V)).
  int64_t vectors(int64_t n) const {
    return (n + int64_t{threads} * vec - 1) / (int64_t{threads} * vec);
  }
};

// With split_tiles, an elementwise kernel's large tile may take several blocks
// (LayoutPlan::blocks_per_tile); emit() plans again without it when the code it generated turns
// out to share values between threads. Throws InternalError when f still has local ops,
// UsageError when spec does not match f.
// With `pipeline`, an mma loop that find_mma_pipeline accepts is planned as a software pipeline;
// emit() plans again without it when the pipeline does not fit in shared memory.
LayoutPlan plan_layouts(const ir::Function& f, const KernelSpec& spec, bool split_tiles = true,
                        bool pipeline = true);

// The reduction along the last axis of a distributed tile of `shape` can use the warp-shuffle
// fast path (a row is held by a power-of-two group of threads, V elements per thread and vector).
bool reduce_fast_path(const Shape& shape, int axis, int vec);

}  // namespace tessera::backend::cuda

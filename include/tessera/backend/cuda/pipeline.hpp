// Finding the mma loops that the CUDA backend software-pipelines (DESIGN §6).
//
// The GEMM a user writes is a loop over K tiles whose body loads a tile of A and a tile of B and
// feeds them to one mma with a carried accumulator:
//
//   for k in [lb, ub):  acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc)
//
// Nothing else in the body has an effect (what remains computes tile coordinates), so the loads
// of later iterations may be issued before the mma of this one: the loop can be pipelined. On
// sm_90a the backend splits the block into a producer warp that copies the operand tiles with the
// tensor-memory accelerator (TMA) into a ring of shared-memory stages, and consumer warpgroups
// that multiply them with wgmma; mbarriers order the two (device/tessera_hopper.cuh). The rest of
// the kernel (what comes before the loop, and the epilogue after it: a bias, an activation, a
// cast, the store) runs in the consumer warpgroups on the accumulator's registers.
// On sm_80/86/89 every warp of the block both copies and multiplies: 16-byte cp.async copies into
// a ring of XOR-swizzled shared-memory stages (commit/wait groups), ldmatrix into mma.sync
// fragments, the warps tiled over the accumulator (device/tessera_ampere.cuh,
// codegen_pipeline_sm80.cpp).
//
// Before: f promoted and verified. After: nothing changes in f; the finding is a description.
// A loop that does not fit returns nullopt, and the kernel takes the general lowering (correct
// for every kernel, fast for none of these).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::backend::cuda {

// Which lowering a pipeline takes: TMA + mbarriers + wgmma (sm_90a), or cp.async + ldmatrix +
// mma.sync (sm_80, sm_86, sm_89).
enum class PipelineTarget : uint8_t { Hopper, Ampere };

struct MmaPipeline {
  PipelineTarget target = PipelineTarget::Hopper;
  const ir::Op* loop = nullptr;  // the for op, in the kernel's top-level block
  const ir::Op* load_a = nullptr;
  const ir::Op* load_b = nullptr;
  const ir::Op* mma = nullptr;
  int a_param = 0, b_param = 0;
  DType operand = DType::F16;  // f16 or bf16; the accumulator is f32
  int bm = 0, bn = 0, bk = 0;
  // Ampere: the block's warps tile the accumulator as a warps_m x warps_n grid (ampere_warps).
  int warps_m = 0, warps_n = 0;
  // The ops the producer evaluates too: those the loop's bounds and the loads' tile coordinates
  // depend on (scalars without effects, in the top-level block and in the body).
  std::set<const ir::Op*> producer_ops;

  int consumers() const { return bm / 64; }  // Hopper: consumer warpgroups, 64 rows each
  // The threads that hold the accumulator (on Hopper the producer warpgroup comes on top).
  int consumer_threads() const {
    return target == PipelineTarget::Ampere ? 32 * warps_m * warps_n : 128 * consumers();
  }
  // A is copied in column strips ("atoms") of at most 64 elements (128 bytes, the widest TMA
  // swizzle); each strip is a [bm, a_atom] box swizzled by its row width.
  int a_atom() const { return bk < 64 ? bk : 64; }
  int a_swizzle_bytes() const { return a_atom() * 2; }
  int64_t a_bytes() const { return int64_t{bm} * bk * 2; }
  // B is copied in strips of 64 columns, [bk, 64] boxes with 128-byte rows (N-major for wgmma).
  int64_t b_bytes() const { return int64_t{bk} * bn * 2; }
  int64_t stage_bytes() const { return a_bytes() + b_bytes(); }
};

// An op that computes scalars and nothing else: the producer may evaluate it again, the
// consumers may skip it when only the producer needs it, or compute it early.
bool scalar_and_pure(const ir::Function& f, const ir::Op& op);

// The producer's slice of a pipelined loop: the ops that `roots` (the loop's bounds and its
// loads' coordinates) depend on, back to the values no op defines (`def`: each value's op or
// null), added to `slice`. False when one of them is not scalar_and_pure, or when a root reaches
// a value with no op other than `induction` (the loop's induction variable).
bool producer_slice(const ir::Function& f, const std::vector<const ir::Op*>& def,
                    ir::ValueId induction, std::vector<ir::ValueId> roots,
                    std::set<const ir::Op*>& slice);

// The loop of f that the backend pipelines for `spec`, if any: on sm_90a (Hopper) and on
// sm_80, sm_86 and sm_89 (Ampere).
std::optional<MmaPipeline> find_mma_pipeline(const ir::Function& f, const KernelSpec& spec);

// The Ampere lowering's warp grid for a [bm, bn] accumulator and K step bk, set in p: warp tiles
// near 64x64 (each ldmatrix'd fragment feeds several mma), 4 to 8 warps, every warp tile a whole
// number of 16x16 pieces (ldmatrix.x4 loads 16 rows of A, 16 columns of B), and operand rows that
// the XOR swizzle can permute (pipeline_sm80.cpp). False when the tile does not fit.
bool ampere_warps(MmaPipeline& p);

}  // namespace tessera::backend::cuda

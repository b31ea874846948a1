// Finding the attention-shaped loops that the CUDA backend lowers like FlashAttention-3 on sm_90a
// (DESIGN §6). The loop a user writes for a flash-attention forward walks the key tiles:
//
//   q = load(Q, ...)                                   // [BM, D], loop-invariant
//   for j in [lb, ub):
//     s = mma(q, transpose(load(K, {.., j, ..})), 0)   // [BM, BN] scores
//     ... elementwise ops and row reductions on s and on [BM, 1] rows (an online softmax) ...
//     acc = f(acc, ...) + mma(cast<f16|bf16>(p), load(V, {.., j, ..}), 0)   // [BM, D]
//
// The loads of Q, K and V feed only mma operands, so they can land in shared memory by TMA; a
// [BN, D] row-major tile of K transposed is exactly wgmma's K-major B operand (no data moves);
// V is its N-major B operand; p, cast to 16 bits, is the register A operand of the second mma
// where it already is (an accumulator fragment of the first). The backend then splits the block
// into a producer warp (TMA copies of Q once per tile, K and V per step into an mbarrier ring)
// and consumer warpgroups of 64 rows each that keep every [BM, N] tile in wgmma accumulator
// fragments and every [BM, 1] row in two registers a thread (rows g and g + 8 of its warp).
//
// Before: f promoted and verified. After: nothing changes in f; the finding is a description.
// The structure is checked here; the body's other ops are checked while they are emitted
// (codegen_attention.cpp), and a kernel that does not fit either takes the general lowering.
#pragma once

#include <optional>
#include <set>

#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::backend::cuda {

// One of the three loads: a padded tile [1.., rows, 1.., D] of a rank-2..4 f16/bf16 input whose
// only other extent is the innermost, D (contiguous rows TMA can address).
struct AttentionLoad {
  const ir::Op* load = nullptr;
  int param = 0;
  int row_axis = 0;  // the axis of the tile's `rows` extent
  int rows = 0;
};

struct AttentionPipeline {
  const ir::Op* loop = nullptr;    // the for op, in the kernel's top-level block
  const ir::Op* s_mma = nullptr;   // mma(q, transpose(k), 0)
  const ir::Op* pv_mma = nullptr;  // mma(cast(p), v, 0)
  const ir::Op* p_cast = nullptr;  // the cast that makes the register A operand
  AttentionLoad q, k, v;
  DType operand = DType::F16;  // q, k, v: f16 or bf16; the scores and the output accumulate in f32
  int bm = 0, bn = 0, dim = 0;
  // Values that are the loads or the reshapes/transposes between them and the mmas: they live in
  // shared memory only.
  std::set<ir::ValueId> in_shared;
  // The ops the producer evaluates too: those the loop's bounds and the loads' coordinates depend
  // on (scalars without effects).
  std::set<const ir::Op*> producer_ops;

  int consumers() const { return bm / 64; }  // consumer warpgroups, 64 rows each
  int consumer_threads() const { return 128 * consumers(); }
  // Each tile is copied in strips of 64 elements (128-byte rows, the widest TMA swizzle).
  int strips() const { return dim / 64; }
  int64_t q_bytes() const { return int64_t{bm} * dim * 2; }
  int64_t kv_bytes() const { return int64_t{bn} * dim * 2; }  // each of K and V
  int64_t stage_bytes() const { return 2 * kv_bytes(); }
};

// The attention loop of f that the backend lowers as above for `spec`, if any (sm_90a only).
std::optional<AttentionPipeline> find_attention_pipeline(const ir::Function& f,
                                                         const KernelSpec& spec);

}  // namespace tessera::backend::cuda

// The software-pipelining pass over the lowered form (docs/compiler.md, "The software pipeline").
//
// The pipelined lowerings (pipeline.hpp: GEMM on sm_90a and sm_80; attention_pipeline.hpp) find a
// loop whose loads feed only tensor-core operands. This pass turns that finding into explicit ops
// of the lowered form: each such load becomes an async_copy into a slot of a shared-memory ring,
// copied stages - 1 iterations ahead of its readers (the copies of the first iterations before the
// loop), with a barrier_wait on the slot's `full` barrier before its first reader, a
// barrier_arrive on its `empty` barrier after its last, and a barrier_wait on `empty` before the
// copy that refills it. A loop-invariant tile (attention's Q) is copied once before the loop.
// verify_lowered checks the result; the emitters take the ring (stage count, buffer offsets,
// stage size) from it, and TESSERA_DUMP=layouts prints it.
#pragma once

#include <cstdint>

#include "tessera/backend/cuda/attention_pipeline.hpp"
#include "tessera/backend/cuda/lowered.hpp"
#include "tessera/backend/cuda/pipeline.hpp"

namespace tessera::backend::cuda {

// How many stages of `stage_bytes` fit in `free_bytes` of shared memory, at most `max_stages`;
// below 2 the loop cannot overlap a copy with a multiply and takes the general lowering.
int ring_stages(int64_t free_bytes, int64_t stage_bytes, int max_stages);

// The ring of a GEMM loop: A then B in each stage (pipeline.hpp's byte counts).
PipelinedLoop mma_ring(const MmaPipeline& p, int stages);
// The ring of an attention loop: K then V in each stage, and Q once (at the start of shared
// memory, before the ring).
PipelinedLoop attention_ring(const ir::Function& f, const AttentionPipeline& a, int stages);

// `lf` with `ring`'s loop software-pipelined as above. Throws InternalError when a buffer's load
// is not where the ring says (a ring buffer's in the loop's body, a once-buffer's before the loop).
LoweredFunction software_pipeline(const LoweredFunction& lf, const PipelinedLoop& ring);

}  // namespace tessera::backend::cuda

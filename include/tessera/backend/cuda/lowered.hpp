// The lowered form of a kernel for the CUDA backend (docs/compiler.md, "Layouts in the lowered
// form"): the IR's ops, each value typed with the layout the plan gave it (layout.hpp), and each
// conversion the plan asks for an explicit convert_layout op placed before its first reader. A
// reader in a nested block uses a conversion made in an enclosing one, as the emitter does. The
// emitter takes its conversions from here (Emitter::operand); a pass that rewrites this form (a
// software pipeline, say) keeps it valid, which verify_lowered checks: every operand an op reads
// has the layout the op reads it in, made by a conversion defined before the op when it is not
// the value's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/backend/cuda/layout.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::backend::cuda {

// A value of the lowered form: an IR value in one layout. Values [0, IR values) are the IR's own,
// in their planned layouts; a convert_layout's result comes after them.
struct LoweredValue {
  ir::ValueId ir = 0;  // the IR value it holds
  Layout layout;
};

struct LoweredBlock;

// An IR op, or an op the lowering adds: a layout conversion, or the software pipeline's
// (software_pipeline.hpp) asynchronous copy into shared memory and the barriers around it.
enum class LoweredKind : uint8_t { Ir, ConvertLayout, AsyncCopy, BarrierWait, BarrierArrive };
// A ring slot's two barriers: `full` once its copy has landed (readers wait on it), `empty` once
// its readers are done with it (the next copy into it waits on it).
enum class Barrier : uint8_t { Full, Empty };

struct LoweredOp {
  LoweredKind kind = LoweredKind::Ir;
  const ir::Op* op = nullptr;  // the IR op; null for the others
  // An IR op: the lowered value each operand is read from, and the layout the op reads it in
  // (its type at this use).
  std::vector<size_t> operands;
  std::vector<Layout> reads_as;
  std::vector<LoweredBlock> regions;  // the IR op's, lowered
  // A convert_layout: the value it converts and the value it makes.
  size_t source = 0, result = 0;
  // An async copy or barrier: the buffer of LoweredFunction::pipeline, and the loop iteration
  // whose slot it names, `ahead` of the current one (slot (it + ahead) % stages); 0 outside the
  // loop for a buffer copied once.
  size_t buffer = 0;
  int ahead = 0;
  Barrier barrier = Barrier::Full;
};

struct LoweredBlock {
  std::vector<LoweredOp> ops;
};

// A tile a pipelined loop reads from shared memory, copied there asynchronously: into each stage
// of the loop's ring (the copy of iteration it + stages - 1 issued while iteration it computes),
// or once before the loop for a tile the loop does not change.
struct RingBuffer {
  const ir::Op* load = nullptr;    // the IR load whose tile it holds (the copy replaces it)
  std::vector<ir::ValueId> views;  // the load's result and its reshapes/transposes: same bytes
  int64_t offset = 0;              // in its stage; a once-buffer from the start of shared memory
  int64_t bytes = 0;
  bool once = false;
};

struct PipelinedLoop {
  const ir::Op* loop = nullptr;  // a for op of the top-level block
  int stages = 0;
  int64_t stage_bytes = 0;
  std::vector<RingBuffer> buffers;
};

struct LoweredFunction {
  const ir::Function* fn = nullptr;
  std::vector<LoweredValue> values;
  LoweredBlock body;
  // (IR op, operand index) -> the convert_layout result it reads, for operands read converted.
  std::map<std::pair<const ir::Op*, size_t>, size_t> converted;
  // Set by software_pipeline: the loop whose loads became async copies into a ring.
  std::optional<PipelinedLoop> pipeline;
};

// `f` with `plan`'s layouts as types and its conversions as convert_layout ops.
LoweredFunction lower_layouts(const ir::Function& f, const LayoutPlan& plan);

// Throws InternalError naming the op, the operand and both layouts when an op reads an operand in
// a layout other than the one it reads it in, or reads a conversion not defined before it (in its
// block or an enclosing one), or a convert_layout converts from a layout its source does not have.
// A pipelined loop's ring is checked too: every read of a buffer follows a wait on its slot's
// `full` barrier and precedes the arrive that releases the slot, every copy into a slot follows a
// wait on its `empty` barrier and lands at most stages - 1 iterations ahead (no slot is rewritten
// while a reader may still use it), and each iteration's tile is copied exactly once.
void verify_lowered(const LoweredFunction& lf);

// The lowered form as text (TESSERA_DUMP=layouts): one line per op, each result with its dtype,
// shape and layout; a use read in another layout names the conversion's result.
std::string print_lowered(const LoweredFunction& lf);

}  // namespace tessera::backend::cuda

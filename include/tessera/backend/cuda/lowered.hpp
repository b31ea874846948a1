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
#include <map>
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

struct LoweredOp {
  const ir::Op* op = nullptr;  // the IR op; null for a convert_layout
  // An IR op: the lowered value each operand is read from, and the layout the op reads it in
  // (its type at this use).
  std::vector<size_t> operands;
  std::vector<Layout> reads_as;
  std::vector<LoweredBlock> regions;  // the IR op's, lowered
  // A convert_layout: the value it converts and the value it makes.
  size_t source = 0, result = 0;
};

struct LoweredBlock {
  std::vector<LoweredOp> ops;
};

struct LoweredFunction {
  const ir::Function* fn = nullptr;
  std::vector<LoweredValue> values;
  LoweredBlock body;
  // (IR op, operand index) -> the convert_layout result it reads, for operands read converted.
  std::map<std::pair<const ir::Op*, size_t>, size_t> converted;
};

// `f` with `plan`'s layouts as types and its conversions as convert_layout ops.
LoweredFunction lower_layouts(const ir::Function& f, const LayoutPlan& plan);

// Throws InternalError naming the op, the operand and both layouts when an op reads an operand in
// a layout other than the one it reads it in, or reads a conversion not defined before it (in its
// block or an enclosing one), or a convert_layout converts from a layout its source does not have.
void verify_lowered(const LoweredFunction& lf);

// The lowered form as text (TESSERA_DUMP=layouts): one line per op, each result with its dtype,
// shape and layout; a use read in another layout names the conversion's result.
std::string print_lowered(const LoweredFunction& lf);

}  // namespace tessera::backend::cuda

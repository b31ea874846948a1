// Result types of an op, from its operand types and attributes: the typing rules of the IR in one
// place. The builder calls it to type each op as it is traced (so a bad op fails at the user's
// line); the verifier calls it again to check every op after each pass.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "tessera/ir/ir.hpp"

namespace tessera::ir {

struct Inferred {
  std::vector<Type> types;  // the op's result types
  std::string error;        // non-empty: the rule the op breaks, as a sentence
  bool ok() const { return error.empty(); }
};

// For `if` and `yield` the result types come from the regions; they return no types here and the
// verifier checks them structurally.
Inferred infer_types(const Function& f, OpKind kind, std::span<const ValueId> operands,
                     const Attrs& attrs);

}  // namespace tessera::ir

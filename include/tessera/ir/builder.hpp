// Builds a Function op by op. Every op is typed as it is added (infer_types), so a rule broken by
// a kernel is reported at the user's line, as a KernelError. `for` and `if` are built open: their
// regions take ops until close(), which appends the op to the enclosing block.
#pragma once

#include <memory>
#include <vector>

#include "tessera/ir/ir.hpp"

namespace tessera::ir {

class Builder {
 public:
  explicit Builder(Function& f);

  Function& function() { return f_; }

  // Adds an op with at most one result to the current block; returns the result, or kNone.
  static constexpr ValueId kNone = ~ValueId{0};
  ValueId add(OpKind kind, std::vector<ValueId> operands, Attrs attrs, SourceLoc loc);

  // Opens a for or if. For a `for`, region 0 gets its induction variable as block argument.
  void open(OpKind kind, std::vector<ValueId> operands, SourceLoc loc);
  void enter_region(int index);  // subsequent ops go to region `index` of the innermost open op
  void exit_region();
  void close();  // terminates the open op's regions with empty yields and appends it

  // Regions are numbered as they are entered; the entry block is 0. A region is open while ops
  // can still be added to it.
  int current_region() const { return region_ids_.back(); }
  bool is_open(int region) const;
  // Appends an op to an enclosing open region (which places it just before the open op that
  // leads to the current region).
  void add_to(int region, OpKind kind, std::vector<ValueId> operands, Attrs attrs, SourceLoc loc);
  ValueId induction_variable() const;  // of the innermost open `for` region

 private:
  ValueId add_to_block(Block& b, OpKind kind, std::vector<ValueId> operands, Attrs attrs,
                       SourceLoc loc);
  Function& f_;
  std::vector<std::unique_ptr<Op>> open_;  // ops whose regions are being filled
  std::vector<Block*> blocks_;            // insertion stack; blocks_[0] is the function body
  std::vector<int> region_ids_;
  int next_region_ = 1;
};

}  // namespace tessera::ir

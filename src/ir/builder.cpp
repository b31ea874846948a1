#include "tessera/ir/builder.hpp"

#include <algorithm>

#include "tessera/ir/infer.hpp"

namespace tessera::ir {

Builder::Builder(Function& f) : f_(f) {
  blocks_.push_back(&f_.body);
  region_ids_.push_back(0);
}

ValueId Builder::add_to_block(Block& b, OpKind kind, std::vector<ValueId> operands, Attrs attrs,
                              SourceLoc loc) {
  Inferred inferred = infer_types(f_, kind, operands, attrs);
  if (!inferred.ok()) fail_at<KernelError>(loc, inferred.error);
  Op op{kind, std::move(operands), {}, {}, std::move(attrs), loc};
  ValueId result = kNone;
  for (Type& t : inferred.types) op.results.push_back(result = f_.new_value(std::move(t)));
  b.ops.push_back(std::move(op));
  return result;
}

ValueId Builder::add(OpKind kind, std::vector<ValueId> operands, Attrs attrs, SourceLoc loc) {
  TESSERA_INTERNAL_CHECK(op_info(kind).regions == 0);
  // The CUDA backend issues a prefetch once, before the kernel's first statement; inside a loop
  // or a branch it would claim a place in the order it does not have.
  if (kind == OpKind::Prefetch && blocks_.size() > 1)
    fail_at<KernelError>(loc, "prefetch of '",
                         attrs.param >= 0 && static_cast<size_t>(attrs.param) < f_.params.size()
                             ? f_.params[static_cast<size_t>(attrs.param)].name
                             : std::string("?"),
                         "' inside a for_range or if_ body; call it in the kernel's body, outside "
                         "loops and branches (it warms the cache for the whole kernel)");
  return add_to_block(*blocks_.back(), kind, std::move(operands), std::move(attrs), loc);
}

void Builder::add_to(int region, OpKind kind, std::vector<ValueId> operands, Attrs attrs,
                     SourceLoc loc) {
  auto it = std::find(region_ids_.begin(), region_ids_.end(), region);
  TESSERA_INTERNAL_CHECK(it != region_ids_.end(), "region is not open");
  add_to_block(*blocks_[it - region_ids_.begin()], kind, std::move(operands), std::move(attrs),
               loc);
}

bool Builder::is_open(int region) const {
  return std::find(region_ids_.begin(), region_ids_.end(), region) != region_ids_.end();
}

void Builder::open(OpKind kind, std::vector<ValueId> operands, SourceLoc loc) {
  TESSERA_INTERNAL_CHECK(kind == OpKind::For || kind == OpKind::If);
  Inferred inferred = infer_types(f_, kind, operands, {});
  if (!inferred.ok()) fail_at<KernelError>(loc, inferred.error);
  auto op = std::make_unique<Op>(Op{kind, std::move(operands), {}, {}, {}, loc});
  op->regions.resize(op_info(kind).regions);
  if (kind == OpKind::For) op->regions[0].args.push_back(f_.new_value(Type{DType::I32, {}}));
  open_.push_back(std::move(op));
}

void Builder::enter_region(int index) {
  TESSERA_INTERNAL_CHECK(!open_.empty());
  blocks_.push_back(&open_.back()->regions.at(index));
  region_ids_.push_back(next_region_++);
}

void Builder::exit_region() {
  TESSERA_INTERNAL_CHECK(blocks_.size() > 1);
  blocks_.pop_back();
  region_ids_.pop_back();
}

void Builder::close() {
  TESSERA_INTERNAL_CHECK(!open_.empty());
  std::unique_ptr<Op> op = std::move(open_.back());
  open_.pop_back();
  for (Block& r : op->regions) r.ops.push_back(Op{OpKind::Yield, {}, {}, {}, {}, op->loc});
  blocks_.back()->ops.push_back(std::move(*op));
}

ValueId Builder::induction_variable() const {
  TESSERA_INTERNAL_CHECK(!open_.empty() && open_.back()->kind == OpKind::For);
  return open_.back()->regions[0].args[0];
}

}  // namespace tessera::ir

// Builds IR by hand, op by op, with no type inference and no checks: how tests make the broken
// functions that the tracer would never produce.
#pragma once

#include <utility>
#include <vector>

#include "tessera/ir/ir.hpp"

namespace tessera::test {

inline ir::Type f32(Shape s) {
  return {DType::F32, std::move(s)};
}
inline ir::Type f16(Shape s) {
  return {DType::F16, std::move(s)};
}
inline ir::Type i32() {
  return {DType::I32, {}};
}
inline ir::Type boolean() {
  return {DType::Bool, {}};
}

// Where ops built by hand say they come from; tests mark the op a diagnostic must point at with
// kBlamed.
inline constexpr SourceLoc kHandLoc{"hand.cpp", 1, 1};
inline constexpr SourceLoc kBlamed{"blamed.cpp", 42, 7};

struct HandIR {
  ir::Function f;

  // A kernel `k(z: out f32 tile [4], x: in f32 rank 1, n: scalar i32)` with a grid of rank 1.
  HandIR() {
    f.name = "k";
    f.params = {{"z", ir::ParamKind::Out, DType::F32, 1, {4}},
                {"x", ir::ParamKind::In, DType::F32, 1, {}},
                {"n", ir::ParamKind::Scalar, DType::I32, 0, {}}};
    f.grid_rank = 1;
    f.loc = kHandLoc;
  }

  ir::ValueId value(const ir::Type& t) { return f.new_value(t); }

  // Appends an op to `b` whose results are the given values (already typed).
  ir::Op& op(ir::Block& b, ir::OpKind kind, std::vector<ir::ValueId> operands,
             std::vector<ir::ValueId> results = {}, ir::Attrs attrs = {},
             SourceLoc loc = kHandLoc) {
    b.ops.push_back(
        ir::Op{kind, std::move(operands), std::move(results), {}, std::move(attrs), loc});
    return b.ops.back();
  }
  // Appends an op with one new result of type t and returns the result.
  ir::ValueId op1(ir::Block& b, ir::OpKind kind, std::vector<ir::ValueId> operands,
                  const ir::Type& t, ir::Attrs attrs = {}, SourceLoc loc = kHandLoc) {
    const ir::ValueId r = value(t);
    op(b, kind, std::move(operands), {r}, std::move(attrs), loc);
    return r;
  }
  // A constant tile of type t.
  ir::ValueId constant(ir::Block& b, const ir::Type& t, double v = 0, SourceLoc loc = kHandLoc) {
    ir::Attrs a;
    a.dtype = t.dtype;
    a.shape = t.shape;
    a.value = v;
    // Moved, not copied: g++ 13 at -O2 reports an inlined Attrs copy's Shape as out of bounds
    // (-Warray-bounds, a false positive inside std::vector).
    return op1(b, ir::OpKind::Constant, {}, t, std::move(a), loc);
  }
  ir::Block& body() { return f.body; }
};

}  // namespace tessera::test

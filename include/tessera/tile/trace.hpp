// The non-template core of the kernel DSL: the trace that DSL values record into, and the
// bookkeeping that lets C++ variables be reassigned inside for_range/if_ bodies.
//
// Loop-carried values: a tracer cannot know, when a loop body first reads `acc`, that the body
// will reassign it later. So a traced value that is read or assigned in a region other than the
// one it was defined in becomes a tracer-local variable: its value is stored (local_store) in the
// region that owns it, and each nested read or write is a local_load/local_store. The pass
// promote_locals then turns the variables back into SSA: loop-carried block arguments and
// for/if results (mem2reg on structured regions). Values that stay in one region never touch a
// variable.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"
#include "tessera/ir/ir.hpp"

namespace tessera::tile::detail {

// The state a DSL value carries: its current SSA value and the region that value lives in,
// and its variable once it has crossed regions.
class Traced {
 public:
  // The value to use as an operand at the current point of the trace.
  ir::ValueId get(SourceLoc loc) const;
  // Rebinds this C++ object to `v`, as an assignment at the current point of the trace.
  void set(ir::ValueId v, SourceLoc loc);
  const ir::Type& type() const;

 protected:
  explicit Traced(ir::ValueId v);
  Traced(const Traced& other, SourceLoc loc);
  Traced& operator=(const Traced& other);
  Traced(Traced&& other) noexcept = default;
  Traced& operator=(Traced&& other);
  ~Traced() = default;

 private:
  mutable ir::ValueId value_;
  mutable int region_;
  mutable int var_ = -1;
};

// Adds an op with one result (or none) to the current trace. Throws KernelError, at `loc`,
// when the op breaks a typing rule, or when no kernel is being traced.
// `attrs` is taken by reference, so the DSL's inline functions (compiled in users' kernels) never
// copy an Attrs: g++ 13 at -O3 reports the inlined copy of its one-element Shape as out of bounds
// (-Warray-bounds, a false positive inside std::vector); the copy is made here, in the library.
ir::ValueId emit(ir::OpKind kind, std::vector<ir::ValueId> operands, const ir::Attrs& attrs,
                 SourceLoc loc);
// Elementwise binary op with numpy-style broadcasting of the two operands.
ir::ValueId emit_binary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, SourceLoc loc);
// select(cond, a, b) with the three broadcast numpy-style to one shape.
ir::ValueId emit_select(ir::ValueId cond, ir::ValueId a, ir::ValueId b, SourceLoc loc);
// An elementwise op of three operands (fma, clamp) with the three broadcast numpy-style.
ir::ValueId emit_ternary(ir::OpKind kind, ir::ValueId a, ir::ValueId b, ir::ValueId c,
                         SourceLoc loc);
// A rank-0 constant of `dtype`.
ir::ValueId emit_constant(DType dtype, double value, SourceLoc loc);
// A rank-0 constant of an integer dtype, held exactly (an i64 above 2^53 included).
ir::ValueId emit_integer_constant(DType dtype, int64_t value, SourceLoc loc);
// Broadcasts `v` (numpy rules: leading axes added, extent-1 axes stretched) to `shape`.
ir::ValueId emit_broadcast_to(ir::ValueId v, const Shape& shape, SourceLoc loc);

// Sets the kernel's numerics policy (it applies to the whole kernel, wherever it is set).
void set_numerics(ir::Numerics n, SourceLoc loc);

const ir::Type& type_of(ir::ValueId v);
const ir::Param& param(int index);
int grid_rank();

// Structured control flow: the body callbacks run while the region is open.
void trace_for(ir::ValueId lb, ir::ValueId ub, ir::ValueId step,
               const std::function<void(ir::ValueId iv)>& body, SourceLoc loc);
void trace_if(ir::ValueId cond, const std::function<void()>& then_body,
              const std::function<void()>& else_body, SourceLoc loc);

// Traces `body` into a new Function with the given parameters. Not reentrant on one thread.
ir::Function trace(std::string name, std::vector<ir::Param> params, SourceLoc loc,
                   const std::function<void()>& body);

}  // namespace tessera::tile::detail

// Control flow and printing in kernels. Bodies are C++ lambdas; they run once, at trace time, and
// record a region. Tile variables declared outside a body may be read and reassigned inside it:
// the tracer turns them into loop-carried values (see trace.hpp).
#pragma once

#include <functional>
#include <type_traits>

#include "tessera/tile/params.hpp"

namespace tessera::tile {

// for (i = begin; i < end; i += step) body(i). `begin`, `end` and `step` may be constants or Index
// values computed in the kernel.
template <class F>
  requires std::is_invocable_v<F, Index>
void for_range(IndexArg begin, IndexArg end, IndexArg step, F&& body) {
  // One statement each: call arguments are evaluated in an unspecified order, and the bounds'
  // constants should be traced in the same order by every compiler.
  const ir::ValueId lb = begin.get();
  const ir::ValueId ub = end.get();
  const ir::ValueId st = step.get();
  detail::trace_for(
      lb, ub, st, [&](ir::ValueId iv) { body(Index(iv)); }, begin.loc);
}
template <class F>
  requires std::is_invocable_v<F, Index>
void for_range(IndexArg begin, IndexArg end, F&& body) {
  SourceLoc loc = begin.loc;
  const ir::ValueId lb = begin.get();  // in order, as above
  const ir::ValueId ub = end.get();
  const ir::ValueId st = detail::emit_constant(DType::I32, 1, loc);
  detail::trace_for(
      lb, ub, st, [&](ir::ValueId iv) { body(Index(iv)); }, loc);
}

// if (cond) then_body() else else_body(); cond is a bool scalar.
template <class F, class G = std::nullptr_t>
void if_(At<Tile<bool>> cond, F&& then_body, G&& else_body = nullptr) {
  std::function<void()> otherwise;
  if constexpr (!std::is_same_v<std::decay_t<G>, std::nullptr_t>) otherwise = else_body;
  detail::trace_if(cond.value.value(cond.loc), then_body, otherwise, cond.loc);
}

// The kernel's numerics policy (docs/dsl.md, "Numerics"): Numerics::exact (the default: every
// backend computes what the CPU backend computes) or Numerics::fast (the GPU may use approximate
// f32 instructions for exp, log, division, rsqrt, sin, cos, max and min, within documented error
// bounds). It applies to the whole kernel wherever it is said, and is part of the JIT key.
using ir::Numerics;
inline void numerics(Numerics n, std::source_location l = std::source_location::current()) {
  detail::set_numerics(n, l);
}

// A format string whose location is the caller's.
struct Format {
  Format(const char* text, std::source_location l = std::source_location::current())  // NOLINT
      : text(text), loc(l) {}
  const char* text;
  SourceLoc loc;
};

// Prints from every tile block; each `{}` in the format takes the next scalar. Lines from one
// block appear whole, in an unspecified order across blocks.
template <Element... Ts>
void print(Format fmt, const Tile<Ts>&... values) {
  ir::Attrs a;
  a.text = fmt.text;
  detail::emit(ir::OpKind::Print, {values.value(fmt.loc)...}, a, fmt.loc);
}

}  // namespace tessera::tile

// Reductions (sum, max, min, prod, any, all along one axis). f16/bf16 accumulate in f32, narrow
// integers in int (wrapping at the end, as the CPU backend's exact sum does); max/min propagate
// NaN.
//
// Fast path (the plan gives the result the Slice layout): reducing the last axis of a
// distributed tile whose rows are G = R/V vectors, G a power of two. A row is then held by a
// group of min(G, T) consecutive threads (and, when G > T, by m = G/T of each thread's vectors):
// each thread reduces its registers, the group reduces with __shfl_xor_sync, and groups wider than
// a warp combine their warps' results through shared memory in a fixed order, so every thread of
// the group ends with the same value.
// Any other axis, or rows that are not a power of two of vectors: reduce_across
// (codegen_reduce_across.cpp), the axis split among the threads and the partials combined in a
// tree.
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {
namespace {

// `fast`: the kernel's numerics are fast and the accumulator is f32 (max.NaN / min.NaN: one
// instruction, NaN still propagates).
// any / all accumulate bools in an int (acc_type), so they are the max / min of 0 and 1.
std::string combine(ir::OpKind k, bool fast, const std::string& a, const std::string& b) {
  const char* f = k == ir::OpKind::ReduceSum    ? "tsr_add"
                  : k == ir::OpKind::ReduceProd ? "tsr_mul"
                  : k == ir::OpKind::ReduceAny  ? "tsr_max"
                  : k == ir::OpKind::ReduceAll  ? "tsr_min"
                  : k == ir::OpKind::ReduceMax  ? (fast ? "tsr_max_fast" : "tsr_max")
                                                : (fast ? "tsr_min_fast" : "tsr_min");
  return std::string(f) + "(" + a + ", " + b + ")";
}

}  // namespace

void Emitter::reduce(const ir::Op& op) {
  const Operand x = operand(op, 0);
  const ir::ValueId r = op.results[0];
  const DType dt = type(r).dtype;
  const Shape& shape = type(op.operands[0]).shape;
  const std::string acc = acc_type(dt), rt = reg_type(dt);
  const bool sum = op.kind == ir::OpKind::ReduceSum;
  const bool fast = fn().numerics == ir::Numerics::fast && acc == "float";
  const auto combine = [&](ir::OpKind k, const std::string& a, const std::string& b) {
    return detail::combine(k, fast, a, b);
  };
  declare(r);
  line("{");
  ++depth_;

  if (layout(r).kind == LayoutKind::Slice) {
    const int64_t t = threads(), v = vec(), n = numel(shape), row = shape.back();
    const int64_t k_count = plan_.vectors(n), g = row / v, group = std::min(g, t);
    const int64_t m = std::max<int64_t>(1, g / t), rows = k_count / m;
    // 1. Each vector's own elements (and, when a row spans several of this thread's vectors,
    //    those vectors together).
    line(acc, " row[", rows, "];");
    if (const ir::ValueId src = op.operands[0]; streamed(src)) {
      // A streamed row (Emitter::plan_streaming): one row a group, reduced one vector at a time,
      // each recomputed from the inputs; same order of combination as below.
      TESSERA_INTERNAL_CHECK(rows == 1 && vector_only_.empty(), "a streamed reduction of ", rows,
                             " rows a thread");
      const std::string identity = sum                                ? "(" + acc + ")0"
                                   : op.kind == ir::OpKind::ReduceMax ? "-tsr_inf_f32()"
                                                                      : "tsr_inf_f32()";
      line(acc, " p = ", identity, ";");
      // Vectors in steps of stream_group (LayoutPlan): each step's loads are issued together.
      const int group = vectors_a_step(k_count, plan_.stream_group);
      unroll();
      open("for (int kv = 0; kv < ", k_count / group, "; ++kv)");
      vector_only_ = group == 1 ? "kv" : "kv * " + str(group);
      vector_group_ = group;
      materialize(src);
      unroll();
      line("for (int e = 0; e < ", group * v, "; ++e) p = ",
           combine(op.kind, "p",
                   "(" + acc + ")" + name(src) + "[" + vector_only_ + " * " + str(v) + " + e]"),
           ";");
      vector_only_.clear();
      vector_group_ = 1;
      end_materialized();
      close();
      line("row[0] = p;");
    } else {
      unroll();
      open("for (int q = 0; q < ", rows, "; ++q)");
      line(acc,
           " p = ", sum ? "(" + acc + ")0" : "(" + acc + ")" + x.var + "[q * " + str(m * v) + "]",
           ";");
      unroll();
      line("for (int e = ", sum ? 0 : 1, "; e < ", m * v, "; ++e) p = ",
           combine(op.kind, "p", "(" + acc + ")" + x.var + "[q * " + str(m * v) + " + e]"), ";");
      line("row[q] = p;");
      close();
    }
    // 2. Across the lanes of the group within a warp.
    if (const int64_t width = std::min<int64_t>(group, 32); width > 1) {
      unroll();
      open("for (int q = 0; q < ", rows, "; ++q)");
      unroll();
      line("for (int o = ", width / 2, "; o > 0; o >>= 1) row[q] = ",
           combine(op.kind, "row[q]", "__shfl_xor_sync(0xffffffffu, row[q], o)"), ";");
      close();
    }
    // 3. Across the warps of the group, through shared memory.
    if (group > 32) {
      const int64_t warps = t / 32, per_group = group / 32;
      const int64_t smem_at =
          smem_buffer(rows * warps * acc_bytes(acc), op, "a reduction across warps");
      line(acc, "* s = ", smem(acc, smem_at), ";");
      barrier();
      line("if (", lane(), " == 0) for (int q = 0; q < ", rows, "; ++q) s[q * ", warps, " + ",
           warp(), "] = row[q];");
      barrier();
      line("const int first = ", warp(), " / ", per_group, " * ", per_group, ";");
      unroll();
      open("for (int q = 0; q < ", rows, "; ++q)");
      line(acc, " p = s[q * ", warps, " + first];");
      unroll();
      line("for (int j = 1; j < ", per_group,
           "; ++j) p = ", combine(op.kind, "p", "s[q * " + str(warps) + " + first + j]"), ";");
      line("row[q] = p;");
      close();
    }
    unroll();
    line("for (int k = 0; k < ", k_count, "; ++k) ", name(r),
         "[k] = ", round_to(dt, "row[k / " + str(m) + "]"), ";");
    close();
    return;
  }

  reduce_across(op, x,
                [&](const std::string& a, const std::string& b) { return combine(op.kind, a, b); });
}

}  // namespace tessera::backend::cuda::detail

// Reductions that the last-axis shuffle path (codegen_reduce.cpp) does not take: along any other
// axis (a column sum, P·V over key positions, the combine of split chunks), or along a last axis
// whose rows are not a power of two of vectors. One thread walking all E elements of each result
// leaves most threads idle behind an E-step dependent chain; instead the axis is split among the
// threads (P partial reducers per result, each over its own segment, in order), and the partials
// are combined in a fixed pairwise tree: shuffles between lanes of a warp, then one pass through
// shared memory. The chain is ~E/P + log2(P) long.
//
// Two forms:
// - In registers, when the distributed tile of shape [outer, E, inner] has whole vectors along
//   inner and T*V a multiple of inner whose J = T*V/inner divides E: thread t = r*G + c (G =
//   inner/V column groups) then holds, for every outer index, the rows r, r + J, r + 2J, ... of
//   column group c. Nothing is staged: each thread reduces its own registers, the J threads of a
//   column group combine in a tree (shuffles at distances G, 2G, ... within a warp, then shared
//   memory across warps), and the owner of each result element finishes it.
// - Through shared memory otherwise: the tile is staged, thread p*R + q reduces segment p (of P,
//   contiguous) of result q (of R), then the same tree. With 2R > T (every thread already has
//   work) or E < 16 each result's owner walks its whole line, as before.
// Order: f16/bf16/f32 (and f64) sums and products are deterministic but not the CPU backend's
// (which sums in double and rounds once): within f32 summation error of it, like the shuffle
// path. Integer sums and products wrap, and max/min/any/all select, so their results are the
// CPU backend's whatever the order (docs/dsl.md, "Reductions").
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {
namespace {

int64_t pow2_floor(int64_t x) {
  int64_t p = 1;
  while (p * 2 <= x) p *= 2;
  return p;
}

}  // namespace

void Emitter::reduce_across(
    const ir::Op& op, const Operand& x,
    const std::function<std::string(const std::string&, const std::string&)>& combine) {
  const ir::ValueId r = op.results[0];
  const DType dt = type(r).dtype, st = type(op.operands[0]).dtype;
  const Shape& shape = type(op.operands[0]).shape;
  const std::string acc = acc_type(dt), rt = reg_type(dt);
  const bool sum = op.kind == ir::OpKind::ReduceSum;
  const size_t axis = static_cast<size_t>(op.attrs.axis);
  const int64_t t = threads(), v = vec(), n = numel(shape), extent = shape[axis];
  int64_t inner = 1;
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t results = n / extent, outer = results / inner;
  const Shape& rshape = type(r).shape;
  // A segment's partial: `first` its first element, then `next(j)` for j in [from, to).
  const auto segment = [&](const std::string& p, const std::string& first,
                           const std::function<std::string(const std::string&)>& at,
                           const std::string& from, const std::string& to) {
    line(acc, " ", p, " = ", sum ? "(" + acc + ")0" : "(" + acc + ")" + first, ";");
    no_unroll();  // run-time bounds, or a long line: unrolling buys little
    const std::string start = !sum ? (from == "0" ? "1" : from + " + 1") : from;
    line("for (int j = ", start, "; j < ", to, "; ++j) ", p, " = ",
         combine(p, "(" + acc + ")" + at("j")), ";");
  };
  // Each result's owner (in the result's distributed layout) combines its `count` partials,
  // part[i * results + flat], in a pairwise tree; the partials were written before a barrier.
  const auto finish = [&](const std::string& part, int64_t count) {
    for_registers(layout(r), rshape, [&](const Reg& g) {
      if (!g.valid.empty()) open("if (", g.valid, ")");
      line(acc, " q[", count, "];");
      unroll();
      line("for (int i = 0; i < ", count, "; ++i) q[i] = ", part, "[i * ", results, " + ", g.flat,
           "];");
      for (int64_t w = 1; w < count; w *= 2) {
        unroll();
        line("for (int i = 0; i + ", w, " < ", count, "; i += ", 2 * w,
             ") q[i] = ", combine("q[i]", "q[i + " + str(w) + "]"), ";");
      }
      line(name(r), "[", g.reg, "] = ", round_to(dt, "q[0]"), ";");
      if (!g.valid.empty()) {
        close("} else {");
        ++depth_;
        line(name(r), "[", g.reg, "] = (", rt, ")0;");
        close();
      }
    });
  };
  // Shuffles down at distances group, 2*group, ... below min(32, group * count): lane l then
  // holds the combination of the partials of lanes l, l + group, ... (a tree, lower lanes first).
  // Returns how many partials each warp combined.
  // `vars`: p is an array of that many partials (0: a scalar).
  const auto shuffle = [&](const std::string& p, int64_t vars, int64_t group, int64_t count) {
    if (group >= 32 || 32 % group != 0) return int64_t{1};
    const int64_t within = std::min<int64_t>(count, 32 / group);
    if (within < 2) return int64_t{1};
    unroll();
    open("for (int d = ", group, "; d < ", group * within, "; d <<= 1)");
    const std::string at = vars > 0 ? p + "[i]" : p;
    if (vars > 0) {
      unroll();
      open("for (int i = 0; i < ", vars, "; ++i)");
    }
    line(at, " = ", combine(at, "__shfl_down_sync(0xffffffffu, " + at + ", d)"), ";");
    if (vars > 0) close();
    close();
    return within;
  };

  const int64_t groups = v > 0 && inner % v == 0 ? inner / v : 0;                     // G
  const int64_t rows_apart = groups > 0 && (t * v) % inner == 0 ? t * v / inner : 0;  // J
  if (x.layout.kind == LayoutKind::Distributed && rows_apart > 0 && extent % rows_apart == 0) {
    const int64_t per_outer = extent / rows_apart;  // this thread's vectors per outer index
    if (rows_apart == 1)  // T*V == inner: each thread holds whole lines, nothing to combine
      line("// thread c reduces every row of column group c, in its registers");
    else
      line("// ", rows_apart, " partials a result: thread r * ", groups,
           " + c reduces rows r, r + ", rows_apart, ", ... of column group c; then a tree");
    line(acc, " p[", outer * v, "];");
    unroll();
    open("for (int o = 0; o < ", outer, "; ++o)");
    unroll();
    open("for (int e = 0; e < ", v, "; ++e)");
    const auto at = [&](const std::string& m) {
      return x.var + "[(o * " + str(per_outer) + " + " + m + ") * " + str(v) + " + e]";
    };
    line(acc, " a = ", sum ? "(" + acc + ")0" : "(" + acc + ")" + at("0"), ";");
    unroll();
    line("for (int m = ", sum ? 0 : 1, "; m < ", per_outer,
         "; ++m) a = ", combine("a", "(" + acc + ")" + at("m")), ";");
    line("p[o * ", v, " + e] = a;");
    close();
    close();
    const int64_t within = shuffle("p", outer * v, groups, rows_apart);
    const int64_t left = rows_apart / within;  // partials of each result after the shuffles
    if (left == 1 && outer == 1 && layout(r).kind == LayoutKind::Distributed) {
      // Thread c (< G) holds column group c, which is its own vector of the result.
      unroll();
      open("for (int e = 0; e < ", v, "; ++e)");
      line(name(r), "[e] = tid < ", groups, " ? ", round_to(dt, "p[e]"), " : (", rt, ")0;");
      close();
      close();
      return;
    }
    const int64_t at_part = smem_buffer(left * results * acc_bytes(acc), op,
                                        "the partials of a reduction across threads");
    line(acc, "* part = ", smem(acc, at_part), ";");
    barrier();
    if (within > 1) {  // the lanes that hold their warp's partials
      open("if ((tid / ", groups, ") % ", within, " == 0)");
    } else {
      line("{");
      ++depth_;
    }
    unroll();
    line("for (int i = 0; i < ", outer * v, "; ++i) part[(tid / ", groups * within, ") * ", results,
         " + i / ", v, " * ", inner, " + tid % ", groups, " * ", v, " + i % ", v, "] = p[i];");
    close();
    barrier();
    finish("part", left);
    close();
    return;
  }

  const int64_t elem =
      is_float(st) && dtype_size(st) < 4 ? 4 : static_cast<int64_t>(dtype_size(st));
  // Below 16 elements a line the split's shuffles and extra barrier cost about what they save.
  const int64_t split =
      2 * results > t || extent < 16 ? 1 : std::min(pow2_floor(t / results), pow2_floor(extent));
  const int64_t within =
      split > 1 && 32 % results == 0 ? std::min<int64_t>(split, 32 / results) : 1;
  const int64_t left = split / within;
  // One buffer: the staged tile, then (after a barrier) the partials over it.
  const int64_t smem_at =
      smem_buffer(std::max(n * elem, split > 1 ? left * results * acc_bytes(acc) : 0), op,
                  "a reduction of a " + ir::to_string(type(op.operands[0])) + " tile");
  const std::string srt = reg_type(st);
  line(srt, "* s = ", smem(srt, smem_at), ";");
  barrier();
  stage(x.var, x.layout, shape, "s");
  barrier();
  const Shape strides = row_major_strides(shape);
  const int64_t stride = strides[axis];
  if (split > 1) {
    line("// ", split, " partials a result: thread p * ", results, " + q reduces segment p of ",
         "result q; then a tree");
    line(acc, " p = (", acc, ")0;");
    open("if (tid < ", split * results, ")");
    line("const int q = tid % ", results, ", seg = tid / ", results, ";");
    line("const int b = q / ", inner, " * ", extent * inner, " + q % ", inner, ";");
    line("const int from = seg * ", extent, " / ", split, ", to = (seg + 1) * ", extent, " / ",
         split, ";");
    segment(
        "a", "s[b + from * " + str(stride) + "]",
        [&](const std::string& j) { return "s[b + " + j + " * " + str(stride) + "]"; }, "from",
        "to");
    line("p = a;");
    close();
    TESSERA_INTERNAL_CHECK(shuffle("p", 0, results, split) == within,
                           "the shuffle levels of a reduction disagree with its partial buffer");
    line(acc, "* part = ", smem(acc, smem_at), ";");
    barrier("every segment is read");
    line("if (tid < ", split * results, " && (tid / ", results, ") % ", within,
         " == 0) part[tid / ", results * within, " * ", results, " + tid % ", results, "] = p;");
    barrier();
    finish("part", left);
    close();
    return;
  }
  // Every thread has results of its own: each walks its results' lines, in order.
  for_registers(layout(r), rshape, [&](const Reg& g) {
    if (!g.valid.empty()) open("if (", g.valid, ")");
    line("const int b = ", line_start(g.flat, rshape, strides, axis), ";");
    segment(
        "p", "s[b]", [&](const std::string& j) { return "s[b + " + j + " * " + str(stride) + "]"; },
        "0", str(extent));
    line(name(r), "[", g.reg, "] = ", round_to(dt, "p"), ";");
    if (!g.valid.empty()) {
      close("} else {");
      ++depth_;
      line(name(r), "[", g.reg, "] = (", rt, ")0;");
      close();
    }
  });
  close();
}

}  // namespace tessera::backend::cuda::detail

// mma(a[M,K], b[K,N], acc[M,N]) = a @ b + acc.
//
// f16/bf16 operands run on tensor cores: a and b are staged in shared memory as 16-bit patterns
// (a row-major, b transposed, K padded to a multiple of 16 and the covered rows/cols of the
// tiling padded, all padding zero, rows padded by 8 halves so fragment loads hit distinct banks),
// then each warp loads its fragments and issues mma.sync.m16n8k16 with f32 accumulation into the
// accumulator's fragments (MmaAcc layout). An f16/bf16 accumulator is rounded once per mma, as the
// CPU backend rounds acc + a @ b.
// f32 operands the user asked to round to TF32 (mma(..., Precision::tf32)) run on tensor cores
// too (staged_mma). Other f32, f64 and i8 operands take a CUDA-core loop over shared memory
// (correct, not fast): each thread computes the accumulator elements it holds in the distributed
// layout.
// A load whose only user is the operand lands in shared memory directly (the plan's Shared
// layout); any other operand is written there from its registers.
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {

void Emitter::stage_operand(
    const ir::Op& op, size_t i, const std::string& dst,
    const std::function<std::string(const std::string&, const std::string&)>& index, bool bits) {
  const ir::ValueId v = op.operands[i];
  const ir::Type& t = type(v);
  const int64_t cols = t.shape[1];
  const auto convert = [&](const std::string& x) { return bits ? to_storage(t.dtype, x) : x; };
  const Layout& l = layout(v);
  if (l.kind == LayoutKind::Shared) {
    line("// operand ", i == 0 ? "a" : "b", ": ", op_text(*def(v)));
    load_into(
        *def(v),
        [&](const std::vector<std::string>& idx, const std::string& value) {
          line(dst, "[", index(idx[0], idx[1]), "] = ", value, ";");
        },
        bits);
    return;
  }
  const Operand x{name(v), l};
  if (l.kind == LayoutKind::Uniform) {
    line("for (int i = tid; i < ", numel(t.shape), "; i += ", threads(), ") ", dst, "[",
         index("i / " + str(cols), "i % " + str(cols)), "] = ", convert(x.var), ";");
    return;
  }
  for_registers(l, t.shape, [&](const Reg& g) {
    const std::string cond = g.valid.empty()   ? g.owner
                             : g.owner.empty() ? g.valid
                                               : g.valid + " && " + g.owner;
    line(cond.empty() ? "" : "if (" + cond + ") ", dst, "[",
         index("(" + g.flat + ") / " + str(cols), "(" + g.flat + ") % " + str(cols)),
         "] = ", convert(x.var + "[" + g.reg + "]"), ";");
  });
}

// Zeroes dst[r * ld + c] for r in [r0, r1), c in [c0, c1).
void Emitter::zero_region(const std::string& dst, int64_t ld, int64_t r0, int64_t r1, int64_t c0,
                          int64_t c1) {
  const int64_t w = c1 - c0, count = (r1 - r0) * w;
  if (count <= 0) return;
  line("for (int i = tid; i < ", count, "; i += ", threads(), ") ", dst, "[(", r0, " + i / ", w,
       ") * ", ld, " + ", c0, " + i % ", w, "] = 0;");
}

void Emitter::mma(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  const ir::Type& ta = type(op.operands[0]);
  const int64_t m = ta.shape[0], k = ta.shape[1], n = type(op.operands[1]).shape[1];
  const DType in = ta.dtype, out = type(r).dtype;
  const Operand c = operand(op, 2);
  declare(r);
  unroll();
  line("for (int i = 0; i < ", registers(layout(r), type(r).shape), "; ++i) ", name(r),
       "[i] = ", at(c.var, c.layout, "i"), ";");
  line("{");
  ++depth_;

  if (!mma_on_tensor_cores(in, op.attrs.tf32)) {
    const std::string rt = reg_type(in), acc = acc_type(out);
    const int64_t size = in == DType::F64 ? 8 : static_cast<int64_t>(dtype_size(in));
    const int64_t at_a = smem_buffer(m * k * size, op, "operand a of an mma, staged");
    const int64_t at_b = smem_buffer(k * n * size, op, "operand b of an mma, staged");
    line(rt, "* sa = ", smem(rt, at_a), ";  // a: [", m, "][", k, "]");
    line(rt, "* sb = ", smem(rt, at_b), ";  // b: [", k, "][", n, "]");
    barrier();
    stage_operand(
        op, 0, "sa",
        [&](const std::string& i, const std::string& j) {
          return "(" + i + ") * " + str(k) + " + " + j;
        },
        false);
    stage_operand(
        op, 1, "sb",
        [&](const std::string& i, const std::string& j) {
          return "(" + i + ") * " + str(n) + " + " + j;
        },
        false);
    barrier();
    for_registers(layout(r), type(r).shape, [&](const Reg& g) {
      if (!g.valid.empty()) open("if (", g.valid, ")");
      line("const int i = (", g.flat, ") / ", n, ", j = (", g.flat, ") % ", n, ";");
      line(acc, " s = 0;");
      no_unroll();
      line("for (int kk = 0; kk < ", k, "; ++kk) s = tsr_add(s, tsr_mul((", acc, ")sa[i * ", k,
           " + kk], (", acc, ")sb[kk * ", n, " + j]));");
      line(name(r), "[", g.reg, "] = ", round_to(out, "tsr_add(" + name(r) + "[" + g.reg + "], s)"),
           ";");
      if (!g.valid.empty()) close();
    });
    close();
    return;
  }

  const MmaTiling t = plan_.tiling(type(r).shape);
  // 16-bit operands as their bit patterns for mma.sync.m16n8k16 (rows padded by 8 halves); f32
  // operands the user asked to round (Precision::tf32) as f32, rounded to TF32 as each fragment
  // is loaded, for mma.sync.m16n8k8 (rows padded by 4 words). Either way a fragment load's 8 rows
  // hit 32 different banks.
  const StagedMma how =
      op.attrs.tf32
          ? StagedMma{"float", 4, 8, 4, false, "tsr_frag_a_tf32", "tsr_frag_b_tf32", "tsr_mma_tf32"}
          : StagedMma{"unsigned short",
                      2,
                      16,
                      8,
                      true,
                      "tsr_frag_a",
                      "tsr_frag_b",
                      in == DType::BF16 ? "tsr_mma_bf16" : "tsr_mma_f16"};
  staged_mma(op, t, how);
  const std::string& v = name(r);
  if (out == DType::F16 || out == DType::BF16) {
    unroll();
    line("for (int i = 0; i < ", t.registers(), "; ++i) ", v, "[i] = ", round_to(out, v + "[i]"),
         ";");
  }
  close();
}

// Both operands staged in shared memory (a row-major, b transposed, K padded to a multiple of the
// instruction's k and the covered rows/cols of the tiling padded, all padding zero), then each
// warp loads its fragments per k step and multiplies them into the accumulator's fragments
// (MmaAcc layout).
void Emitter::staged_mma(const ir::Op& op, const MmaTiling& t, const StagedMma& how) {
  const ir::Type& ta = type(op.operands[0]);
  const int64_t m = ta.shape[0], k = ta.shape[1], n = type(op.operands[1]).shape[1];
  const int64_t kp = (k + how.k_step - 1) / how.k_step * how.k_step, ld = kp + how.row_pad;
  const int64_t bytes_a = t.rows() * ld * how.bytes, bytes_b = t.cols() * ld * how.bytes;
  const int64_t at_a = smem_buffer(bytes_a, op, "operand a of an mma, staged");
  const int64_t at_b = smem_buffer(bytes_b, op, "operand b of an mma, staged (transposed)");
  const std::string elem = how.element;
  line(elem, "* sa = ", smem(elem, at_a), ";  // a: [", t.rows(), "][", ld, "] row-major");
  line(elem, "* sb = ", smem(elem, at_b), ";  // b transposed: [", t.cols(), "][", ld, "]");
  barrier();
  zero_region("sa", ld, m, t.rows(), 0, kp);
  zero_region("sa", ld, 0, m, k, kp);
  zero_region("sb", ld, n, t.cols(), 0, kp);
  zero_region("sb", ld, 0, n, k, kp);
  stage_operand(
      op, 0, "sa",
      [&](const std::string& i, const std::string& j) {
        return "(" + i + ") * " + str(ld) + " + " + j;
      },
      how.as_bits);
  stage_operand(
      op, 1, "sb",
      [&](const std::string& i, const std::string& j) {
        return "(" + j + ") * " + str(ld) + " + " + i;
      },
      how.as_bits);
  barrier();
  line("const int wm = ", warp(), " / ", t.warps_n, ", wn = ", warp(), " % ", t.warps_n, ";");
  line("const ", elem, "* wa = sa + wm * ", t.frags_m * 16 * ld, ";");
  line("const ", elem, "* wb = sb + wn * ", t.frags_n * 8 * ld, ";");
  unroll();
  open("for (int kk = 0; kk < ", kp / how.k_step, "; ++kk)");
  line("unsigned fa[", t.frags_m, "][4], fb[", t.frags_n, "][2];");
  unroll();
  line("for (int i = 0; i < ", t.frags_m, "; ++i) ", how.frag_a, "(fa[i], wa + i * ", 16 * ld,
       " + kk * ", how.k_step, ", ", ld, ", ", lane(), ");");
  unroll();
  line("for (int j = 0; j < ", t.frags_n, "; ++j) ", how.frag_b, "(fb[j], wb + j * ", 8 * ld,
       " + kk * ", how.k_step, ", ", ld, ", ", lane(), ");");
  unroll();
  open("for (int i = 0; i < ", t.frags_m, "; ++i)");
  unroll();
  open("for (int j = 0; j < ", t.frags_n, "; ++j)");
  line("const int q = (i * ", t.frags_n, " + j) * 4;");
  const std::string& v = name(op.results[0]);
  line(how.mma, "(", v, "[q], ", v, "[q + 1], ", v, "[q + 2], ", v, "[q + 3], fa[i], fb[j]);");
  close();
  close();
  close();
}

}  // namespace tessera::backend::cuda::detail

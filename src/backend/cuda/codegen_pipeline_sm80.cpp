// The pipelined mma loop on sm_80, sm_86 and sm_89 (pipeline.hpp says which loops;
// device/tessera_ampere.cuh holds the instructions and the wait-group protocol).
//
// Every thread of the block copies and every warp multiplies: the warps tile the accumulator as
// ampere_warps chose (LayoutPlan::tiling gives the epilogue the same fragments). One block per
// tile, the tiles in groups of kGroupRows tile rows so that the operand strips neighbouring
// blocks read at the same time stay in L2.
//
// Shared memory: the epilogue's scratch (from offset 0), then the ring: `stages` stages of
// [A: bm rows of bk elements][B: bk rows of bn elements], both row-major as in global memory.
// Each row is a run of 16-byte chunks; chunk c of row r sits at chunk c ^ swizzle(r), which
// permutes the chunks within each 128-byte line (or, for 32- and 64-byte rows, across the rows
// sharing one), so that the 8 rows an ldmatrix reads at one chunk land in 8 different bank groups
// and so do the 8 chunks a quarter-warp's cp.async writes.
#include <algorithm>

#include "codegen_emitter.hpp"
#include "codegen_runtime.hpp"
#include "tessera/backend/cuda/abi_source.hpp"
#include "tessera/backend/cuda/software_pipeline.hpp"

namespace tessera::backend::cuda::detail {
namespace {

constexpr int kMaxStages = 4;
constexpr int kGroupRows = 8;

// The chunk permutation of a row of `chunks` 16-byte chunks (ampere_warps admits 2, 4 and
// multiples of 8): the low bits of the row's position within its 128-byte line group.
std::string swizzle(int chunks, const std::string& row) {
  if (chunks >= 8) return "(" + row + " & 7)";
  if (chunks == 4) return "((" + row + " >> 1) & 3)";
  return "((" + row + " >> 2) & 1)";
}

}  // namespace

void Emitter::ampere_copies(const ir::Op& op, const std::string& step, const std::string& slot) {
  const MmaPipeline& p = *plan_.pipeline;
  const ir::Block& body = op.regions[0];
  line("{");
  ++depth_;
  // The tile coordinates of K step `step`: the body's index arithmetic, evaluated again.
  line("const int ", name(body.args[0]), " = (int)(", step, ");");
  converted_.emplace_back();
  const Role role = role_;
  role_ = Role::Producer;  // only the ops the loads' coordinates need
  for (size_t i = 0; i + 1 < body.ops.size(); ++i) this->op(body.ops[i]);
  role_ = role;
  converted_.pop_back();
  line("unsigned char* const tsr_dst = tsr_ring + (", slot, ") * ", ring().stage_bytes, ";");
  const auto copy = [&](const ir::Op& load, int64_t offset) {
    const int64_t rows = load.attrs.shape[0], cols = load.attrs.shape[1];
    const int64_t chunks = cols / 8, total = rows * chunks, t = threads();
    const std::string ref = param_var(load.attrs.param),
                      sw = swizzle(static_cast<int>(chunks), "row");
    line("{");
    ++depth_;
    line("// ", comment_text(op_text(load)));
    line("const long long r0 = (long long)", name(load.operands[0]), " * ", rows,
         ", c0 = (long long)", name(load.operands[1]), " * ", cols, ";");
    if (t % chunks == 0 && total % t == 0) {
      // Each thread copies one column chunk of every (t / chunks)-th row: one address, one
      // column test, and a row test per chunk (a ragged edge zero-fills the rest).
      const int64_t step = t / chunks;
      line("const int row0 = tid / ", chunks, ", ch = tid % ", chunks, ";");
      // Most tiles lie wholly inside the tensor: one address, no test per chunk.
      open("if (r0 >= 0 && r0 + ", rows, " <= ", ref, ".shape[0] && c0 >= 0 && c0 + ", cols,
           " <= ", ref, ".shape[1])");
      line("const unsigned short* const src = (const unsigned short*)", ref,
           ".data + ((r0 + row0) * ", ref, ".strides[0] + c0 + ch * 8);");
      line("const long long rs = ", step, " * ", ref, ".strides[0];");
      unroll();
      open("for (int i = 0; i < ", total / t, "; ++i)");
      line("const int row = row0 + i * ", step, ";");
      line("tsr_cp_async_16(tsr_dst + ", offset, " + row * ", cols * 2, " + ((ch ^ ", sw,
           ") << 4), src + i * rs);");
      close();
      close("} else {");
      ++depth_;
      line("const long long g0 = r0 + row0, g1 = c0 + ch * 8, left = ", ref, ".shape[1] - g1;");
      line("const int bytes = g1 >= 0 && left > 0 ? (left >= 8 ? 16 : (int)left * 2) : 0;");
      line("const unsigned short* const src = (const unsigned short*)", ref, ".data + (g0 * ", ref,
           ".strides[0] + g1);");
      unroll();
      open("for (int i = 0; i < ", total / t, "; ++i)");
      line("const int row = row0 + i * ", step, ";");
      line("const bool in = bytes > 0 && g0 + i * ", step, " >= 0 && g0 + i * ", step, " < ", ref,
           ".shape[0];");
      line("tsr_cp_async_16(tsr_dst + ", offset, " + row * ", cols * 2, " + ((ch ^ ", sw,
           ") << 4), in ? src + i * ", step, " * ", ref, ".strides[0] : ", ref,
           ".data, in ? bytes : 0);");
      close();
      close();
    } else {
      unroll();
      open("for (int i = 0; i < ", (total + t - 1) / t, "; ++i)");
      line("const int e = i * ", t, " + tid;");
      if (total % t != 0) line("if (e >= ", total, ") break;");
      line("const int row = e / ", chunks, ", ch = e % ", chunks, ";");
      line("tsr_cp_async_chunk(tsr_dst + ", offset, " + row * ", cols * 2, " + ((ch ^ ", sw,
           ") << 4), ", ref, ", r0 + row, c0 + ch * 8);");
      close();
    }
    close();
  };
  copy(*p.load_a, 0);
  copy(*p.load_b, buffer_offset(1));
  close();
}

void Emitter::ampere_loop(const ir::Op& op) {
  const MmaPipeline& p = *plan_.pipeline;
  const ir::Block& body = op.regions[0];
  const MmaTiling m = plan_.tiling({p.bm, p.bn});
  const int s = ring().stages, a_row = p.bk * 2, b_row = p.bn * 2;
  const int warp_rows = m.frags_m * 16, warp_cols = m.frags_n * 8;
  current_op_ = &op;
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + op_text_[&op]));
  line("// pipelined: cp.async copies run ", s - 1,
       " K steps ahead of the mma.sync that read them (ldmatrix from the ring)");
  const ir::ValueId acc = body.args[1];
  declare(acc);
  const Operand init = operand(op, 3);
  unroll();
  line("for (int i = 0; i < ", registers(layout(acc), type(acc).shape), "; ++i) ", name(acc),
       "[i] = ", at(init.var, init.layout, "i"), ";");
  line("{");
  ++depth_;
  line("const long long tsr_lb = ", name(op.operands[0]), ", tsr_ub = ", name(op.operands[1]), ";");
  line("int tsr_read = 0, tsr_write = ", s - 1, ";");
  unroll();
  open("for (int s = 0; s < ", s - 1, "; ++s)");
  open("if (tsr_lb + s < tsr_ub)");
  ampere_copies(op, "tsr_lb + s", "s");
  close();
  line("tsr_cp_async_commit();");
  close();
  // Each lane's ldmatrix row: lanes 0-15 give rows 0-15 of the first 16-element K half (A) or of
  // the 16 K rows (B), lanes 16-31 the same rows of the next chunk. The warp tiles start at
  // multiples of 16 rows, so each lane's swizzle is fixed for the whole loop.
  line("const int tsr_wm = ", warp(), " / ", m.warps_n, ", tsr_wn = ", warp(), " % ", m.warps_n,
       ";");
  line("const int tsr_r16 = ", lane(), " & 15, tsr_hi = ", lane(), " >> 4;");
  line("const int tsr_a_off = (tsr_wm * ", warp_rows, " + tsr_r16) * ", a_row,
       ", tsr_a_swz = ", swizzle(p.bk / 8, "tsr_r16"), ";");
  line("const int tsr_b_off = tsr_r16 * ", b_row, ", tsr_b_swz = ", swizzle(p.bn / 8, "tsr_r16"),
       ";");
  line("const int tsr_b_chunk = tsr_wn * ", warp_cols / 8, " + tsr_hi;");
  no_unroll();
  open("for (long long it = tsr_lb; it < tsr_ub; ++it)");
  line("tsr_cp_async_wait<", s - 2, ">();  // this thread's copies of step it have landed");
  line("__syncthreads();  // everyone's have; and stage it - 1 is free again");
  open("if (it + ", s - 1, " < tsr_ub)");
  ampere_copies(op, "it + " + str(s - 1), "tsr_write");
  close();
  line("tsr_cp_async_commit();");
  line("if (++tsr_write == ", s, ") tsr_write = 0;");
  line("const unsigned char* const sa = tsr_ring + tsr_read * ", ring().stage_bytes, ";");
  line("const unsigned char* const sb = sa + ", buffer_offset(1), ";");
  unroll();
  open("for (int kk = 0; kk < ", p.bk / 16, "; ++kk)");
  line("unsigned fa[", m.frags_m, "][4], fb[", m.frags_n, "][2];");
  unroll();
  line("for (int i = 0; i < ", m.frags_m, "; ++i) tsr_ldmatrix_x4(fa[i], sa + tsr_a_off + i * ",
       16 * a_row, " + (((kk * 2 + tsr_hi) ^ tsr_a_swz) << 4));");
  unroll();
  line("for (int j = 0; j < ", m.frags_n / 2,
       "; ++j) tsr_ldmatrix_x4_trans(fb[2 * j], fb[2 * j + 1], sb + tsr_b_off + kk * ", 16 * b_row,
       " + (((tsr_b_chunk + 2 * j) ^ tsr_b_swz) << 4));");
  unroll();
  open("for (int i = 0; i < ", m.frags_m, "; ++i)");
  unroll();
  open("for (int j = 0; j < ", m.frags_n, "; ++j)");
  line("const int q = (i * ", m.frags_n, " + j) * 4;");
  const std::string& v = name(acc);
  line(p.operand == DType::BF16 ? "tsr_mma_bf16(" : "tsr_mma_f16(", v, "[q], ", v, "[q + 1], ", v,
       "[q + 2], ", v, "[q + 3], fa[i], fb[j]);");
  close();
  close();
  close();
  line("if (++tsr_read == ", s, ") tsr_read = 0;");
  close();
  line("tsr_cp_async_wait<0>();");
  line("__syncthreads();  // every warp is done with the ring before it is filled again");
  close();
  alias(op.results[0], name(acc));
}

EmittedKernel Emitter::run_pipelined_sm80() {
  const MmaPipeline& p = *plan_.pipeline;
  const int t = threads();
  // The body first: it tells how much scratch the epilogue stages, and so how many stages fit.
  // The stage count only appears in the loop, so it is fixed before the body is emitted.
  const int64_t limit = smem_limit(spec_.arch);
  int64_t ring_offset = 0;
  std::string body;
  for (int attempt = 0; attempt < 3; ++attempt) {
    ring_offset = (smem_bytes_ + 127) / 128 * 128;
    const int stages = ring_stages(limit - ring_offset, p.stage_bytes(), kMaxStages);
    if (stages < 2) return {};  // emit() takes the general lowering
    pipeline(mma_ring(p, stages));
    out_.str("");
    depth_ = 2;
    role_ = Role::All;
    block(f_.body);
    body = out_.str();
    if ((smem_bytes_ + 127) / 128 * 128 == ring_offset) break;
  }
  out_.str("");
  depth_ = 0;

  EmittedKernel k;
  k.entry = "tessera_" + identifier(f_.name);
  k.threads = t;
  k.shared_bytes = static_cast<size_t>(ring_offset + ring().stages * ring().stage_bytes);
  k.reports_errors = reports_errors_;
  const MmaTiling m = plan_.tiling({p.bm, p.bn});

  kernel_banner();
  line("// A pipelined mma loop: ", m.warps_m * m.warps_n, " warps (", m.warps_m, "x", m.warps_n,
       "), each a ", m.frags_m * 16, "x", m.frags_n * 8, " tile of mma.sync m16n8k16 (",
       dtype_name(p.operand), "); ", ring().stages, " cp.async stages of ", p.bm, "x", p.bk,
       " and ", p.bk, "x", p.bn, " tiles.");
  const std::string params = abi_params();
  open("extern \"C\" __global__ void __launch_bounds__(", t, ", 1) ", k.entry, "(", params, ")");
  line("extern __shared__ __align__(128) unsigned char tsr_smem[];");
  line("unsigned char* const tsr_ring = tsr_smem + ", ring_offset, ";");
  grid_dependency_prologue(k);
  line("const int tid = threadIdx.x;");
  line("const int lane = tid & 31;");
  line("const int warp = tid >> 5;");
  open_grouped_tile_loop(kGroupRows);
  out_ << body;
  close();
  close();
  k.source =
      std::string(abi_source()) + "\n" + std::string(device_runtime_source()) + "\n" + out_.str();
  return k;
}

}  // namespace tessera::backend::cuda::detail

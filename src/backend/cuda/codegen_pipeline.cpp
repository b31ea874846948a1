// The pipelined mma loop on sm_90a (pipeline.hpp says which loops; device/tessera_hopper.cuh
// holds the instructions and the mbarrier protocol).
//
// The block is T consumer threads (one warpgroup per 64 accumulator rows) plus one producer
// warpgroup, of which one thread issues the copies. Each block stays resident and walks the
// tiles (a persistent grid) in groups of kGroupRows tile rows, so that the operand strips that
// neighbouring blocks read at the same time stay in L2.
//
// Shared memory: the epilogue's scratch (whatever the rest of the kernel stages, from offset 0),
// then the ring: `stages` stages of [A: a_bytes][B: b_bytes], each 1024-byte aligned, as the
// 128-byte swizzle requires.
//   A, per stage: bk / a_atom strips, each [bm rows][a_atom elements], rows of a_swizzle_bytes,
//                 swizzled by TMA; wgmma reads it K-major (8-row groups 8 * row bytes apart).
//   B, per stage: bn / 64 strips, each [bk rows][64 elements] (128-byte rows), swizzled; wgmma
//                 reads it N-major ("transposed"): 8-row groups 1024 bytes apart, strips
//                 bk * 128 bytes apart.
#include <algorithm>

#include "codegen_emitter.hpp"
#include "codegen_runtime.hpp"
#include "tessera/backend/cuda/abi_source.hpp"
#include "tessera/backend/cuda/software_pipeline.hpp"

namespace tessera::backend::cuda::detail {
namespace {

constexpr int kMaxStages = 6;
constexpr int kGroupRows = 8;
// Registers per thread after setmaxnreg: the producer needs few, the consumers' accumulators
// many. 40 * 128 + 232 * 256 = 64512 fits the 65536 of a multiprocessor with one block of 384.
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

// wgmma's swizzle field for a row width in bytes.
int swizzle_mode(int bytes) {
  return bytes == 128 ? 1 : bytes == 64 ? 2 : 3;
}

}  // namespace

// One wgmma.mma_async m64nNk16 of this kernel's operand type, accumulating in f32; B N-major.
void Emitter::wgmma_function(const MmaPipeline& p) {
  const int regs = p.bn / 2;
  const std::string type = p.operand == DType::BF16 ? "bf16" : "f16";
  wgmma_fn_ = "tsr_wgmma_" + type + "_n" + str(p.bn);
  open("__device__ __forceinline__ void ", wgmma_fn_, "(float (&d)[", regs,
       "], unsigned long long da, unsigned long long db)");
  std::string list, outs;
  for (int i = 0; i < regs; ++i) {
    list += (i ? ", %" : "%") + str(i);
    outs += std::string(i ? ", " : "") + "\"+f\"(d[" + str(i) + "])";
  }
  line("asm volatile(");
  line("    \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %", regs + 2, ", 0;\\n\"");
  line("    \"wgmma.mma_async.sync.aligned.m64n", p.bn, "k16.f32.", type, ".", type, " {", list,
       "}, %", regs, ", %", regs + 1, ", p, 1, 1, 0, 1;\\n}\\n\"");
  line("    : ", outs);
  line("    : \"l\"(da), \"l\"(db), \"r\"(1));");
  close();
}

bool Emitter::tma_store(const ir::Op& op, const Operand& x) {
  if (!plan_.pipeline || role_ != Role::Consumer) return false;
  const MmaPipeline& p = *plan_.pipeline;
  const int prm = op.attrs.param;
  const ir::Param& param = f_.params.at(static_cast<size_t>(prm));
  const Shape& tile = param.tile_shape;
  // Once per tile, by every consumer thread (its barriers): a store in the kernel's own block,
  // of a whole f16/bf16 tile whose rows TMA can address, from the loop's wgmma fragments.
  const bool top_level = std::any_of(f_.body.ops.begin(), f_.body.ops.end(),
                                     [&](const ir::Op& o) { return &o == &op; });
  if (!top_level || (param.dtype != DType::F16 && param.dtype != DType::BF16) ||
      tile != Shape{p.bm, p.bn} || !spec(prm).inner_unit_stride || spec(prm).vector_bytes < 16 ||
      (staged_param_ >= 0 && staged_param_ != prm))
    return false;
  const MmaTiling m = plan_.tiling(tile);
  if (m.warps_n != 1 || m.frags_m != 1 || m.rows() != p.bm || m.cols() != p.bn) return false;

  // The widest pass (columns staged at once) that still leaves the ring 4 stages.
  const int64_t room = smem_limit(spec_.arch) - 1024 - (smem_bytes_ + 1023) / 1024 * 1024;
  int cols = 64;
  for (int c = p.bn; c > 64; c /= 2)
    if (p.bn % c == 0 && c % 64 == 0 && (room - int64_t{p.bm} * c * 2) / p.stage_bytes() >= 4) {
      cols = c;
      break;
    }
  staged_param_ = prm;
  staged_cols_ = cols;
  staged_bytes_ = int64_t{p.bm} * cols * 2;

  const std::string pack = param.dtype == DType::F16 ? "tsr_pack_f16x2" : "tsr_pack_bf16x2";
  const int64_t box_bytes = int64_t{64} * cols * 2;  // one warpgroup's 64 rows of a pass
  line("{");
  ++depth_;
  line("// Each consumer warpgroup stages its 64 rows in shared memory, ", cols,
       " columns at a time (64-column strips, 128-byte swizzled rows, as the tensor map of ",
       param_var(prm), " says), and one of its threads hands each strip to TMA.");
  line("const int tsr_wg = ", warp(), " >> 2, tsr_row = 16 * (", warp(), " & 3) + (", lane(),
       " >> 2);");
  line("unsigned char* const tsr_box = tsr_staged + tsr_wg * ", box_bytes, ";");
  line("const bool tsr_issuer = (tid & 127) == 0;");
  line("const int tsr_r0 = (int)((long long)", tile_coord(0), " * ", p.bm, " + tsr_wg * 64);");
  line("const long long tsr_c0 = (long long)", tile_coord(1), " * ", p.bn, ";");
  for (int pass = 0; pass < p.bn / cols; ++pass) {
    line("if (tsr_issuer) tsr_bulk_wait_read();  // the box's last stores have read it");
    line("tsr_bar_sync(2 + tsr_wg, 128);");
    unroll();
    open("for (int i = ", pass * cols / 2, "; i < ", (pass + 1) * cols / 2, "; i += 2)");
    line("const int row = tsr_row + ((i >> 1) & 1) * 8;");
    line("const int col = (i >> 2) * 8 + (", lane(), " & 3) * 2 - ", pass * cols, ";");
    line("tsr_st_smem_u32(tsr_box + (col >> 6) * 8192 + row * 128 + ((((col & 63) >> 3) ^ (row & ",
         "7)) << 4) + ((col & 7) << 1), ", pack, "(", x.var, "[i], ", x.var, "[i + 1]));");
    close();
    line("tsr_fence_async_smem();");
    line("tsr_bar_sync(2 + tsr_wg, 128);");
    open("if (tsr_issuer)");
    for (int s = 0; s < cols / 64; ++s)
      line("tsr_tma_store_2d(&tsr_map2, tsr_box + ", s * 8192, ", (int)(tsr_c0 + ",
           pass * cols + s * 64, "), tsr_r0);");
    line("tsr_bulk_commit();");
    close();
  }
  close();
  return true;
}

void Emitter::producer_loop(const ir::Op& op) {
  const MmaPipeline& p = *plan_.pipeline;
  const ir::Block& body = op.regions[0];
  line("// ", comment_text(short_path(op.loc.file) + ":" + str(op.loc.line)),
       "  producer: the operand tiles of each K step, copied by TMA into the ring");
  const std::string it = "it_" + name(body.args[0]);
  open("for (long long ", it, " = ", name(op.operands[0]), "; ", it, " < ", name(op.operands[1]),
       "; ++", it, ")");
  line("const int ", name(body.args[0]), " = (int)", it, ";");
  for (size_t i = 0; i + 1 < body.ops.size(); ++i) this->op(body.ops[i]);
  line("tsr_mbar_wait(&tsr_empty[tsr_stage], tsr_phase ^ 1);");
  line("unsigned char* sa = tsr_ring + tsr_stage * ", ring().stage_bytes, ";");
  line("unsigned char* sb = sa + ", buffer_offset(1), ";");
  line("tsr_mbar_expect_tx(&tsr_full[tsr_stage], ", ring().stage_bytes, ");");
  // Element coordinates of a load's box: tile coordinate x tile extent, innermost axis first.
  const auto coord = [&](const ir::Op& load, int axis, int64_t plus) {
    std::string c = "(int)((long long)" + name(load.operands[static_cast<size_t>(axis)]) + " * " +
                    str(load.attrs.shape[static_cast<size_t>(axis)]);
    return c + (plus ? " + " + str(plus) : "") + ")";
  };
  for (int s = 0; s < p.bk / p.a_atom(); ++s)
    line("tsr_tma_load_2d(sa + ", int64_t{s} * p.bm * p.a_swizzle_bytes(),
         ", &tsr_map0, &tsr_full[tsr_stage], ", coord(*p.load_a, 1, int64_t{s} * p.a_atom()), ", ",
         coord(*p.load_a, 0, 0), ");");
  for (int s = 0; s < p.bn / 64; ++s)
    line("tsr_tma_load_2d(sb + ", int64_t{s} * p.bk * 128, ", &tsr_map1, &tsr_full[tsr_stage], ",
         coord(*p.load_b, 1, int64_t{s} * 64), ", ", coord(*p.load_b, 0, 0), ");");
  line("if (++tsr_stage == ", ring().stages, ") { tsr_stage = 0; tsr_phase ^= 1; }");
  close();
}

void Emitter::consumer_loop(const ir::Op& op) {
  const MmaPipeline& p = *plan_.pipeline;
  const ir::Block& body = op.regions[0];
  current_op_ = &op;
  line("// ",
       comment_text(short_path(op.loc.file) + ":" + str(op.loc.line) + "  " + op_text_[&op]));
  line("// consumers: wgmma over each stage the producer filled, the accumulator in registers");
  // The epilogue's loads that do not depend on the loop (a bias row, say) are issued before it,
  // so their latency hides under the multiplies instead of stalling every tile's epilogue.
  std::set<const ir::Op*> before;
  for (const ir::Op& o : f_.body.ops) {
    if (&o == &op) break;
    before.insert(&o);
  }
  bool after = false;
  for (const ir::Op& o : f_.body.ops) {
    if (&o == &op) after = true;
    // Loads, and the scalars their coordinates are computed from.
    if (!after || (o.kind != ir::OpKind::Load && !scalar_and_pure(f_, o))) continue;
    const bool invariant = std::all_of(o.operands.begin(), o.operands.end(), [&](ir::ValueId v) {
      const ir::Op* d = def(v);
      return d == nullptr || before.count(d) > 0;
    });
    if (!invariant) continue;
    hoisted_.erase(&o);
    this->op(o);
    hoisted_.insert(&o);
    before.insert(&o);
  }
  current_op_ = &op;
  const ir::ValueId acc = body.args[1];
  declare(acc);
  const Operand init = operand(op, 3);
  unroll();
  line("for (int i = 0; i < ", registers(layout(acc), type(acc).shape), "; ++i) ", name(acc),
       "[i] = ", at(init.var, init.layout, "i"), ";");
  const std::string it = "it_" + name(body.args[0]);
  // One wgmma group stays in flight: each step waits for the previous step's group, and only
  // then gives that stage back to the producer.
  line("int tsr_release = -1;");
  open("for (long long ", it, " = ", name(op.operands[0]), "; ", it, " < ", name(op.operands[1]),
       "; ++", it, ")");
  line("tsr_mbar_wait(&tsr_full[tsr_stage], tsr_phase);");
  line("const unsigned char* sa = tsr_ring + tsr_stage * ", ring().stage_bytes, " + (", warp(),
       " >> 2) * ", 64 * p.a_swizzle_bytes(), ";  // this warpgroup's 64 rows of A");
  line("const unsigned char* sb = tsr_ring + tsr_stage * ", ring().stage_bytes, " + ",
       buffer_offset(1), ";");
  line("tsr_wgmma_fence();");
  for (int k = 0; k < p.bk / 16; ++k) {
    const int64_t a_off = int64_t{k * 16 / p.a_atom()} * p.bm * p.a_swizzle_bytes() +
                          int64_t{k * 16 % p.a_atom()} * 2;
    line(wgmma_fn_, "(", name(acc), ", tsr_wgmma_desc(sa + ", a_off, ", 16, ",
         8 * p.a_swizzle_bytes(), ", ", swizzle_mode(p.a_swizzle_bytes()),
         "), tsr_wgmma_desc(sb + ", int64_t{k} * 16 * 128, ", ", int64_t{p.bk} * 128,
         ", 1024, 1));");
  }
  line("tsr_wgmma_commit();");
  line("tsr_wgmma_wait<1>();");
  line("if (tsr_release >= 0 && ", lane(), " == 0) tsr_mbar_arrive(&tsr_empty[tsr_release]);");
  line("tsr_release = tsr_stage;");
  line("if (++tsr_stage == ", ring().stages, ") { tsr_stage = 0; tsr_phase ^= 1; }");
  close();
  line("tsr_wgmma_wait<0>();");
  line("if (tsr_release >= 0 && ", lane(), " == 0) tsr_mbar_arrive(&tsr_empty[tsr_release]);");
  alias(op.results[0], name(acc));
}

void Emitter::open_grouped_tile_loop(int group_rows) {
  open("for (long long blk = blockIdx.x; blk < grid.total; blk += gridDim.x)");
  line("const long long group = blk / (", group_rows, " * grid.tiles[1]);");
  line("const long long first = group * ", group_rows, ";");
  line("const long long rows = grid.tiles[0] - first < ", group_rows,
       " ? grid.tiles[0] - first : ", group_rows, ";");
  line("const long long in_group = blk - first * grid.tiles[1];");
  line("const int ", tile_coords_[0], " = (int)(first + in_group % rows);");
  line("const int ", tile_coords_[1], " = (int)(in_group / rows);");
}

EmittedKernel Emitter::run_pipelined() {
  const MmaPipeline& p = *plan_.pipeline;
  const int t = threads();
  barrier_stmt_ = "tsr_bar_sync(1, " + str(t) + ");";
  wgmma_function(p);
  const std::string helpers = out_.str();
  out_.str("");

  // The bodies first: they tell how much scratch the epilogue stages (and so how many stages
  // fit). The stage count only appears in the loops, so it is fixed before they are emitted.
  const int64_t limit = smem_limit(spec_.arch);
  int64_t ring_offset = 0, scratch_end = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    // [scratch][the epilogue's TMA staging][ring], each 1024-byte aligned.
    scratch_end = (smem_bytes_ + 1023) / 1024 * 1024;
    ring_offset = scratch_end + staged_bytes_;
    staged_param_ = -1;
    staged_bytes_ = 0;
    // 1024 bytes of slack: dynamic shared memory is only 16-byte aligned, and the ring needs 1024.
    const int stages = ring_stages(limit - 1024 - ring_offset, p.stage_bytes(), kMaxStages);
    if (stages < 2) return {};  // emit() takes the general lowering
    pipeline(mma_ring(p, stages));
    out_.str("");
    depth_ = 3;
    role_ = Role::Consumer;
    block(f_.body);
    // The scratch and the staging were as assumed.
    if ((smem_bytes_ + 1023) / 1024 * 1024 + staged_bytes_ == ring_offset) break;
  }
  const std::string consumer = out_.str();
  out_.str("");
  role_ = Role::Producer;
  block(f_.body);
  const std::string producer = out_.str();
  out_.str("");
  depth_ = 0;

  EmittedKernel k;
  k.entry = "tessera_" + identifier(f_.name);
  k.threads = t + 128;
  k.shared_bytes = static_cast<size_t>(ring_offset + ring().stages * ring().stage_bytes + 1024);
  k.reports_errors = reports_errors_;
  k.blocks_per_sm = 1;
  k.tensor_maps = {{p.a_param, p.a_atom(), p.bm, p.a_swizzle_bytes()}, {p.b_param, 64, p.bk, 128}};
  if (staged_param_ >= 0) k.tensor_maps.push_back({staged_param_, 64, 64, 128});

  kernel_banner();
  line("// A pipelined mma loop: ", p.consumers(), " consumer warpgroup(s) (wgmma m64n", p.bn,
       "k16, ", dtype_name(p.operand), ") and one producer warp (TMA), ", ring().stages,
       " stages of ", p.bm, "x", p.bk, " and ", p.bk, "x", p.bn, " tiles.");
  out_ << helpers;
  std::string params = abi_params();
  params +=
      ", const __grid_constant__ TesseraTensorMap tsr_map0, const __grid_constant__ "
      "TesseraTensorMap tsr_map1";
  if (staged_param_ >= 0) params += ", const __grid_constant__ TesseraTensorMap tsr_map2";
  open("extern \"C\" __global__ void __launch_bounds__(", k.threads, ", 1) ", k.entry, "(", params,
       ")");
  line("#ifdef TESSERA_HOPPER");
  line("extern __shared__ __align__(1024) unsigned char tsr_smem_raw[];");
  line("unsigned char* const tsr_smem = tsr_smem_raw + ((1024 - (tsr_smem_addr(tsr_smem_raw) & ",
       "1023)) & 1023);");
  line("unsigned char* const tsr_ring = tsr_smem + ", ring_offset, ";");
  if (staged_param_ >= 0) line("unsigned char* const tsr_staged = tsr_smem + ", scratch_end, ";");
  line("__shared__ unsigned long long tsr_full[", ring().stages, "], tsr_empty[", ring().stages,
       "];");
  open("if (threadIdx.x == 0)");
  open("for (int s = 0; s < ", ring().stages, "; ++s)");
  line("tsr_mbar_init(&tsr_full[s], 1);  // the producer's arrive.expect_tx");
  line("tsr_mbar_init(&tsr_empty[s], ", t / 32, ");  // one arrival per consumer warp");
  close();
  line("tsr_mbar_fence_init();");
  close();
  line("__syncthreads();");
  grid_dependency_prologue(k);
  line("int tsr_stage = 0;");
  line("unsigned tsr_phase = 0;");

  open("if (threadIdx.x >= ", t, ")");
  line("// The producer warpgroup: one thread issues every copy.");
  if (p.consumers() > 1) line("tsr_regs_dec<", kProducerRegs, ">();");
  open("if (threadIdx.x == ", t, ")");
  line("tsr_tma_prefetch_map(&tsr_map0);");
  line("tsr_tma_prefetch_map(&tsr_map1);");
  open_grouped_tile_loop(kGroupRows);
  out_ << producer;
  close();
  close();
  line("return;");
  close();
  if (p.consumers() > 1) line("tsr_regs_inc<", kConsumerRegs, ">();");
  line("const int tid = threadIdx.x;");
  line("const int lane = tid & 31;");
  line("const int warp = tid >> 5;");
  open_grouped_tile_loop(kGroupRows);
  out_ << consumer;
  close();
  if (staged_param_ >= 0)
    line("if ((tid & 127) == 0) tsr_bulk_wait();  // the last tile's stores are complete");
  line("#endif");
  close();
  k.source =
      std::string(abi_source()) + "\n" + std::string(device_runtime_source()) + "\n" + out_.str();
  return k;
}

}  // namespace tessera::backend::cuda::detail

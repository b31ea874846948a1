// Properties of the emitted CUDA C++ and of the PTX NVRTC makes of it: vector widths, tensor
// cores, warp shuffles, the device-side error flag, the resources the kernel declares, and the
// comments that tie each statement to the IR and the user's line.
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "corpus.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/printer.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

backend::cuda::KernelSpec with_vector_bytes(const ir::Function& f, int bytes) {
  backend::cuda::KernelSpec s = aligned_spec(f, kSm90a);
  for (auto& t : s.tensors) t.vector_bytes = bytes;
  return s;
}

TEST(EmittedCode, ASecondStoreToOneTileWaitsForTheFirst) {
  // The first store writes from the mma accumulator's fragments, the second from a distributed
  // tile: other threads write the same elements, so a barrier must order them. A single store
  // needs none.
  auto twice = trace_kernel<Out<float>, In<half>>(
      "store_twice", {out_param("c", DType::F32, {32, 32}), in_param("a", DType::F16, 2)},
      [](Out<float> c, In<half> a) {
        auto x = load(a, {c.tile_index(0), 0}, {32, 32});
        c.store(mma(x, x, Tile<float>::zeros({32, 32})));
        c.store(Tile<float>::full({32, 32}, 1.0f));
      });
  analysis::promote_locals(twice);
  const std::string source = kernel_part(build(twice, aligned_spec(twice, kSm90a)).kernel.source);
  EXPECT_TRUE(has(source, "__syncthreads();  // an earlier store")) << source;

  const ir::Function once = corpus_kernel("add_f32");
  EXPECT_FALSE(
      has(kernel_part(build(once, aligned_spec(once, kSm90a)).kernel.source), "an earlier store"));
}

TEST(EmittedCode, ContiguousAlignedF32AddMovesSixteenBytesPerAccess) {
  const ir::Function f = corpus_kernel("add_f32");
  const Built b = build(f, aligned_spec(f, kSm90a));
  EXPECT_TRUE(has(b.compiled.ptx, "ld.global.nc.v4.u32")) << b.compiled.ptx;
  EXPECT_TRUE(has(b.compiled.ptx, "st.global.v4.u32")) << b.compiled.ptx;
}

// Each asm statement of a kernel's source that is not volatile, from its keyword (asm or __asm__)
// to the parenthesis that closes it; and whether a macro spells the keyword (which would hide the
// statements behind it from this scan).
struct PlainAsm {
  std::vector<std::string> statements;
  bool macro = false;
};
PlainAsm plain_asm(const std::string& source) {
  const auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  PlainAsm out;
  for (const std::string keyword : {"asm", "__asm__"}) {
    for (size_t at = source.find(keyword); at != std::string::npos;
         at = source.find(keyword, at + keyword.size())) {
      const size_t end = at + keyword.size();
      if ((at > 0 && word_char(source[at - 1])) || (end < source.size() && word_char(source[end])))
        continue;  // part of a longer name
      const size_t line = source.rfind('\n', at) + 1;
      if (source.compare(line, 7, "#define") == 0) out.macro = true;
      size_t open = source.find_first_not_of(" \t\n", end);
      if (open == std::string::npos || source[open] != '(') continue;  // asm volatile, or a macro
      size_t close = open;
      for (int depth = 0; close < source.size(); ++close) {
        if (source[close] == '"' && (close = source.find('"', close + 1)) == std::string::npos)
          break;  // an unclosed string: the rest is the statement (no parentheses in strings)
        else if (source[close] == '(')
          ++depth;
        else if (source[close] == ')' && --depth == 0)
          break;
      }
      out.statements.push_back(source.substr(at, close + 1 - at));
    }
  }
  return out;
}

// The PTX text of an asm statement: its string literals, joined (the operands' C++ expressions,
// such as w[e >> 1], are left out).
std::string asm_template(const std::string& statement) {
  std::string out;
  for (size_t q = statement.find('"'); q != std::string::npos;) {
    const size_t end = statement.find('"', q + 1);
    if (end == std::string::npos) break;
    out += statement.substr(q + 1, end - q - 1);
    q = statement.find('"', end + 1);
  }
  return out;
}

TEST(EmittedCode, NoLoadIsAnAsmStatementTheCompilerMayMoveAboveItsBoundsCheck) {
  // A plain asm statement counts as a pure function of its operands: the compiler may run it
  // where the program does not, above the check that keeps its address inside the tensor (memcheck
  // caught a 16-float weight row read as 128 floats). So every asm statement with a memory operand
  // ("[...]") is volatile, and no macro spells asm (the form the faulty load had).
  for (const char* name : {"add_f32", "rmsnorm_f16"}) {
    const ir::Function f = corpus_kernel(name);
    const std::string source = build(f, aligned_spec(f, kSm90a)).kernel.source;
    const PlainAsm plain = plain_asm(source);
    EXPECT_FALSE(plain.macro) << name;
    EXPECT_FALSE(plain.statements.empty()) << "the scan found no plain asm (conversions are some)";
    for (const std::string& statement : plain.statements)
      EXPECT_FALSE(has(asm_template(statement), "[")) << name << ": " << statement;
    EXPECT_TRUE(has(source, "asm volatile(\"ld.global.nc.v4.u32")) << name;
  }
  // The scan itself: it sees a plain load, a macro, and a statement past its first ';'.
  const PlainAsm probe = plain_asm(
      "#define LD asm\nasm(\"{.reg .b32 r;\\n\\tld.global.u32 r, [%0];}\" :: \"l\"(p));\n"
      "asm volatile(\"ld.global.u32 %0, [%1];\" : \"=r\"(x) : \"l\"(p));");
  EXPECT_TRUE(probe.macro);
  ASSERT_EQ(probe.statements.size(), 1u);
  EXPECT_TRUE(has(asm_template(probe.statements[0]), "[%0]")) << probe.statements[0];
}

TEST(EmittedCode, TilesInsideTheTensorTakeUncheckedAccessesFromOneTileAddress) {
  // Every access first asks whether the whole tile lies inside the tensor; then it addresses the
  // tile's elements by 32-bit offsets from one pointer, with no bounds test per vector.
  const ir::Function f = corpus_kernel("rmsnorm_f16");
  const std::string src = kernel_part(build(f, contiguous_spec(f, kSm90a)).kernel.source);
  EXPECT_TRUE(has(src, "o1 + 1024 <= p1_x.shape[1]")) << src;
  EXPECT_TRUE(has(src, "const unsigned short* tb = base + (o0 * p1_x.strides[0] + o1);")) << src;
  EXPECT_TRUE(has(src, "tsr_ld_words(tb + off, w);")) << src;
  EXPECT_TRUE(has(src, "tsr_st_words(tb + off, w);")) << src;
}

TEST(EmittedCode, RowsOfWholeVectorsNeedNoElementFallbackAtTheEdge) {
  // A contiguous tensor's rows hold whole vectors: a vector is inside or outside, never across
  // the edge, so the edge tiles' code has no per-element accesses. A column slice's rows may end
  // inside a vector, and keep them.
  const ir::Function f = corpus_kernel("add_f16");
  const std::string whole = kernel_part(build(f, contiguous_spec(f, kSm90a)).kernel.source);
  const std::string sliced = kernel_part(build(f, aligned_spec(f, kSm90a)).kernel.source);
  EXPECT_FALSE(has(whole, "const long long ge")) << whole;
  EXPECT_TRUE(has(sliced, "const long long ge")) << sliced;
}

TEST(EmittedCode, TileCoordinatesAreDividedIn32BitsWhenTheGridFits) {
  const ir::Function f = corpus_kernel("softmax_rows");
  const std::string src = kernel_part(build(f, contiguous_spec(f, kSm90a)).kernel.source);
  EXPECT_TRUE(has(src, "if (grid.total <= 0xffffffffLL)")) << src;
  EXPECT_TRUE(has(src, "unsigned rest = (unsigned)blk;")) << src;
}

TEST(EmittedCode, RowWiseKernelsBoundTheirRegisters) {
  // (Their loads stay in place as every kernel's do: NoLoadIsAnAsmStatement... above.)
  const ir::Function rows = corpus_kernel("rmsnorm_f16");
  const Built b = build(rows, contiguous_spec(rows, kSm90a));
  EXPECT_TRUE(has(b.kernel.source, "__launch_bounds__(128, 8)")) << kernel_part(b.kernel.source);
  const ir::Function add = corpus_kernel("add_f32");
  const std::string add_src = build(add, contiguous_spec(add, kSm90a)).kernel.source;
  EXPECT_FALSE(has(kernel_part(add_src), "__launch_bounds__(128, ")) << kernel_part(add_src);
}

TEST(EmittedCode, PersistentRowKernelsPrefetchTheBlocksNextRowIntoL2) {
  // A LayerNorm walks its rows with a persistent grid: its row load also asks L2 for the block's
  // next row (gridDim.x rows on), issued after this row's loads and before the reduction's
  // barriers, so that row's DRAM latency passes while this one is reduced and stored. The weight
  // and bias rows (the same for every tile) are not prefetched. (256 threads, 16 elements each:
  // a norm loading three rows, layout.cpp.)
  auto norm = trace_kernel<Out<half>, In<half>, In<float>, In<float>>(
      "layer_rows",
      {out_param("y", DType::F16, {1, 4096}), in_param("x", DType::F16, 2),
       in_param("w", DType::F32, 2), in_param("b", DType::F32, 2)},
      [](Out<half> y, In<half> x, In<float> w, In<float> b) {
        auto v = load_like(x, y).cast<float>();
        auto d = v - sum(v, 1) * (1.0f / 4096);
        auto r = rsqrt(sum(d * d, 1) * (1.0f / 4096) + 1e-5f);
        y.store((d * r * load(w, {0, 0}, {1, 4096}) + load(b, {0, 0}, {1, 4096})).cast<half>());
      });
  analysis::promote_locals(norm);
  const Built b = build(norm, contiguous_spec(norm, kSm90a));
  const std::string src = kernel_part(b.kernel.source);
  EXPECT_GT(b.kernel.blocks_per_sm, 0) << src;
  const size_t x_load = src.find("tsr_ld_words(tb + off"),
               prefetch = src.find("tsr_prefetch_l2(nb + (k * 256 + tid) * 8)"),
               barrier = src.find("__syncthreads()");
  ASSERT_NE(prefetch, std::string::npos) << src;
  EXPECT_LT(x_load, prefetch) << src;
  EXPECT_LT(prefetch, barrier) << src;
  EXPECT_EQ(src.find("tsr_prefetch_l2", prefetch + 1), std::string::npos) << src;  // x only
  EXPECT_TRUE(has(src, "nb = tb + 1LL * gridDim.x * 1 * p1_x.strides[0]")) << src;
  EXPECT_TRUE(has(src, "if (grid.total == grid.tiles[0] && blk + 1LL * gridDim.x < grid.total"))
      << src;
  EXPECT_TRUE(has(b.compiled.ptx, "prefetch.global.L2")) << b.compiled.ptx;

  // A block per row (softmax) has no next row to prefetch; nor has an elementwise kernel.
  for (const char* name : {"softmax_f16", "add_f32"}) {
    const ir::Function f = corpus_kernel(name);
    const std::string other = kernel_part(build(f, contiguous_spec(f, kSm90a)).kernel.source);
    EXPECT_FALSE(has(other, "tsr_prefetch_l2")) << name << other;
  }
  // Nor has an RMSNorm (a row and a weight row): a block per row ran 7-9% faster than the
  // persistent grid on an H100 (layout.cpp).
  auto rms = trace_kernel<Out<half>, In<half>, In<float>>(
      "rms_rows",
      {out_param("y", DType::F16, {1, 4096}), in_param("x", DType::F16, 2),
       in_param("w", DType::F32, 2)},
      [](Out<half> y, In<half> x, In<float> w) {
        auto v = load_like(x, y).cast<float>();
        y.store((v * rsqrt(sum(v * v, 1) * (1.0f / 4096) + 1e-5f) * load(w, {0, 0}, {1, 4096}))
                    .cast<half>());
      });
  analysis::promote_locals(rms);
  const Built r = build(rms, contiguous_spec(rms, kSm90a));
  EXPECT_EQ(r.kernel.blocks_per_sm, 0);
  EXPECT_FALSE(has(kernel_part(r.kernel.source), "tsr_prefetch_l2"));
  EXPECT_TRUE(has(r.kernel.source, "__launch_bounds__(128, 6)")) << "768 resident threads still";
}

TEST(EmittedCode, EightByteAlignmentGivesEightByteAccesses) {
  const ir::Function f = corpus_kernel("add_f32");
  const Built b = build(f, with_vector_bytes(f, 8));
  EXPECT_TRUE(has(b.compiled.ptx, "ld.global.nc.v2.u32")) << b.compiled.ptx;
  EXPECT_FALSE(has(b.compiled.ptx, ".v4.")) << b.compiled.ptx;
}

TEST(EmittedCode, NoVectorAccessWithoutVectorAlignment) {
  for (const char* name : {"add_f32", "add_f16", "softmax_f16"}) {
    const ir::Function f = corpus_kernel(name);
    const Built b = build(f, with_vector_bytes(f, static_cast<int>(dtype_size(f.params[0].dtype))));
    EXPECT_FALSE(has(b.compiled.ptx, ".v4.u32")) << name;
    EXPECT_FALSE(has(b.compiled.ptx, ".v2.u32")) << name;
    EXPECT_FALSE(has(kernel_part(b.kernel.source), "tsr_ld_words")) << name;
  }
}

TEST(EmittedCode, GemmLoopsArePipelinedWithTmaAndWgmmaOnSm90a) {
  for (const char* name : {"gemm_f16_128x256x64", "gemm_bf16_64x128x32", "gemm_bf16_epilogue"}) {
    const ir::Function f = corpus_kernel(name);
    const Built b = build(f, aligned_spec(f, kSm90a));
    EXPECT_TRUE(has(b.compiled.ptx, "wgmma.mma_async.sync.aligned.m64n")) << name;
    EXPECT_TRUE(has(b.compiled.ptx, "cp.async.bulk.tensor.2d")) << name;
    EXPECT_TRUE(has(b.compiled.ptx, "mbarrier.try_wait.parity")) << name;
    EXPECT_FALSE(has(b.compiled.ptx, "mma.sync")) << name;
    // A, B, and a 16-bit output (stored by TMA; an f32 output is stored from the registers).
    EXPECT_EQ(b.kernel.tensor_maps.size(), dtype_size(f.params[0].dtype) == 2 ? 3u : 2u) << name;
    EXPECT_EQ(b.kernel.blocks_per_sm, 1) << name;
    EXPECT_EQ(b.kernel.threads, static_cast<int>(f.params[0].tile_shape[0]) * 2 + 128) << name;
  }
  // The epilogue runs on the accumulator's registers: no conversion through shared memory.
  const ir::Function e = corpus_kernel("gemm_bf16_epilogue");
  EXPECT_FALSE(has(kernel_part(build(e, aligned_spec(e, kSm90a)).kernel.source),
                   "mma accumulator -> distributed"));
}

TEST(EmittedCode, AccumulatorStoresWriteNeighbourPairsInOneAccess) {
  // bf16 output from f32 fragments (mma.sync's, on sm_80): 4-byte stores of two halves, rounded
  // and packed by one cvt; a tile wholly inside the tensor stores with no check per element, an
  // edge tile with one.
  const ir::Function e = corpus_kernel("gemm_bf16_epilogue");
  const Built b = build(e, aligned_spec(e, kSm80));
  const std::string src = kernel_part(b.kernel.source);
  EXPECT_TRUE(has(src, "tsr_st_word(corner + row * ld + col, tsr_pack_bf16x2(")) << src;
  EXPECT_TRUE(has(src, "tsr_st_word(at, tsr_pack_bf16x2(")) << src;
  EXPECT_TRUE(has(b.compiled.ptx, "st.global.u32"));
  EXPECT_TRUE(has(b.compiled.ptx, "cvt.rn.bf16x2.f32"));
  // Rows not aligned to a pair: one element at a time.
  EXPECT_FALSE(has(kernel_part(build(e, unaligned_spec(e, kSm80)).kernel.source), "tsr_st_word("));
}

TEST(EmittedCode, PipelinedEpilogueLoadsAreIssuedBeforeTheLoop) {
  // The bias row does not depend on the K loop: the consumers load it before their first wgmma,
  // and the loop's result meets it after.
  const ir::Function e = corpus_kernel("gemm_bf16_epilogue");
  const std::string src = kernel_part(build(e, aligned_spec(e, kSm90a)).kernel.source);
  const size_t consumers = src.find("tsr_regs_inc");
  ASSERT_NE(consumers, std::string::npos) << src;
  const size_t bias = src.find("= load $bias", consumers);
  const size_t first_wgmma = src.find("tsr_wgmma_fence();", consumers);
  const size_t add = src.find("= broadcast ", consumers);
  ASSERT_NE(bias, std::string::npos) << src;
  ASSERT_NE(first_wgmma, std::string::npos) << src;
  EXPECT_LT(bias, first_wgmma) << src;
  EXPECT_LT(first_wgmma, add) << src;
}

TEST(EmittedCode, PipelinedEpilogueBroadcastReadsARowByColumnAlone) {
  // The bias row broadcast into the accumulator's fragments: each register reads the staged row at
  // its column, with no division of a flat index, so the registers of one column (rows 8 apart)
  // share one shared-memory read.
  const ir::Function e = corpus_kernel("gemm_bf16_epilogue");
  const std::string src = kernel_part(build(e, aligned_spec(e, kSm90a)).kernel.source);
  const size_t at = src.find("= broadcast ", src.find("tsr_regs_inc"));
  ASSERT_NE(at, std::string::npos) << src;
  const std::string conversion = src.substr(at, src.find("= add ", at) - at);
  EXPECT_TRUE(has(conversion, "] = s[col * 1];")) << conversion;
  EXPECT_FALSE(has(conversion, "s[((row")) << conversion;  // was s[((row * 128 + col)) % 128 * 1]
}

TEST(EmittedCode, ExactReluAgainstAConstantIsOneCompareAndOneSelect) {
  // maximum(x, 0.0f) under exact numerics: NaN when x is NaN, -0 for -0 (the first operand on
  // equality), as the CPU backend. The constant is no NaN, so no NaN test is left per element.
  const ir::Function e = corpus_kernel("gemm_bf16_epilogue");
  const Built b = build(e, aligned_spec(e, kSm90a));
  EXPECT_FALSE(has(b.compiled.ptx, "setp.nan.f32")) << b.compiled.ptx;
  EXPECT_FALSE(has(b.compiled.ptx, "max.NaN.f32")) << b.compiled.ptx;
  EXPECT_TRUE(has(b.compiled.ptx, "setp.lt.f32")) << b.compiled.ptx;
}

TEST(EmittedCode, PipelinedEpilogueStoresThroughSharedMemoryByTma) {
  // The pipelined GEMM's accumulator goes to shared memory (conflict-free swizzled rows) and out
  // by TMA, so the consumers start the next tile while it drains: a third tensor map, over the
  // output, whose boxes tile the block's own tile.
  const ir::Function e = corpus_kernel("gemm_bf16_epilogue");
  const Built b = build(e, aligned_spec(e, kSm90a));
  ASSERT_EQ(b.kernel.tensor_maps.size(), 3U);
  const backend::cuda::TensorMapSpec& out = b.kernel.tensor_maps[2];
  EXPECT_EQ(out.param, 0);
  EXPECT_EQ(out.box_inner, 64);
  EXPECT_EQ(out.box_outer, 64);
  EXPECT_EQ(out.swizzle_bytes, 128);
  EXPECT_TRUE(has(b.compiled.ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group"));
  EXPECT_TRUE(has(b.compiled.ptx, "cp.async.bulk.wait_group.read 0"));
  EXPECT_TRUE(has(b.compiled.ptx, "fence.proxy.async.shared::cta"));
  EXPECT_FALSE(has(b.compiled.ptx, "st.global")) << "every output element goes through TMA";
  // Rows TMA cannot address: the direct stores, and two tensor maps.
  const Built u = build(e, unaligned_spec(e, kSm90a));
  EXPECT_TRUE(u.kernel.tensor_maps.size() < 3U);
  EXPECT_FALSE(has(u.compiled.ptx, "global.shared::cta.bulk_group"));
}

TEST(EmittedCode, GemmLoopsArePipelinedWithCpAsyncLdmatrixAndMmaSyncOnSm80) {
  const backend::cuda::Arch sm86{8, 6, false};
  for (const char* name :
       {"gemm_f16_128x256x64", "gemm_bf16_64x128x32", "gemm_bf16_epilogue", "gemm_f16"}) {
    const ir::Function f = corpus_kernel(name);
    for (const backend::cuda::Arch arch : {kSm80, sm86}) {
      const Built b = build(f, aligned_spec(f, arch));
      const std::string what = std::string(name) + " " + arch.str();
      EXPECT_TRUE(has(b.compiled.ptx, "cp.async.cg.shared.global")) << what;
      EXPECT_TRUE(has(b.compiled.ptx, "cp.async.commit_group")) << what;
      EXPECT_TRUE(has(b.compiled.ptx, "cp.async.wait_group")) << what;
      EXPECT_TRUE(has(b.compiled.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16")) << what;
      EXPECT_TRUE(has(b.compiled.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16")) << what;
      EXPECT_TRUE(has(b.compiled.ptx, "mma.sync.aligned.m16n8k16.row.col.f32")) << what;
      EXPECT_FALSE(has(b.compiled.ptx, "wgmma")) << what;
      EXPECT_FALSE(has(b.compiled.ptx, "cp.async.bulk")) << what;
      EXPECT_TRUE(b.kernel.tensor_maps.empty()) << what;
      const std::string code = kernel_part(b.kernel.source);
      EXPECT_TRUE(has(code, "cp.async stages of")) << code;
    }
  }
  // 128x256 tiles: eight warps of 64x64, three 48 KB stages in sm_80's 163 KB; two on sm_86.
  const ir::Function big = corpus_kernel("gemm_f16_128x256x64");
  const backend::cuda::EmittedKernel k80 = backend::cuda::emit(big, aligned_spec(big, kSm80));
  EXPECT_EQ(k80.threads, 256);
  EXPECT_EQ(k80.shared_bytes, 3u * (128 * 64 + 64 * 256) * 2);
  EXPECT_TRUE(has(k80.source, "8 warps (2x4), each a 64x64 tile")) << kernel_part(k80.source);
  EXPECT_TRUE(has(k80.source, "tsr_cp_async_wait<1>();")) << kernel_part(k80.source);
  EXPECT_EQ(backend::cuda::emit(big, aligned_spec(big, sm86)).shared_bytes,
            2u * (128 * 64 + 64 * 256) * 2);
  // The epilogue (bias, relu, cast) stays in the accumulator's registers here too.
  const ir::Function e = corpus_kernel("gemm_bf16_epilogue");
  EXPECT_FALSE(has(kernel_part(build(e, aligned_spec(e, kSm80)).kernel.source),
                   "mma accumulator -> distributed"));
}

TEST(EmittedCode, GemmLoopsThatTmaCannotCopyTakeTheGeneralLowering) {
  const ir::Function f = corpus_kernel("gemm_f16_128x256x64");
  // Rows not 16-byte aligned: neither TMA nor 16-byte cp.async can copy them.
  for (const backend::cuda::KernelSpec& spec :
       {unaligned_spec(f, kSm90a), unaligned_spec(f, kSm80)}) {
    const Built b = build(f, spec);
    EXPECT_FALSE(has(b.compiled.ptx, "wgmma")) << spec.arch.str();
    EXPECT_FALSE(has(b.compiled.ptx, "cp.async")) << spec.arch.str();
    EXPECT_FALSE(has(b.compiled.ptx, "ldmatrix")) << spec.arch.str();
    EXPECT_TRUE(has(b.compiled.ptx, "mma.sync.aligned.m16n8k16")) << spec.arch.str();
    EXPECT_TRUE(b.kernel.tensor_maps.empty());
  }
  // Tiles the Ampere pipeline does not take (20-deep K steps, 24 columns: not whole 16-element
  // ldmatrix pieces), and an f16 accumulator.
  for (const char* name : {"gemm_f16_ragged", "gemm_bf16_acc_bf16"}) {
    const ir::Function g = corpus_kernel(name);
    EXPECT_FALSE(has(build(g, aligned_spec(g, kSm80)).compiled.ptx, "cp.async")) << name;
  }
  // Tile shapes wgmma does not take (48 rows), and an f16 accumulator.
  for (const char* name : {"gemm_f16_ragged", "gemm_bf16_acc_bf16"}) {
    const ir::Function g = corpus_kernel(name);
    EXPECT_TRUE(build(g, aligned_spec(g, kSm90a)).kernel.tensor_maps.empty()) << name;
  }
}

TEST(EmittedCode, F16AndBf16MmaRunOnTensorCores) {
  const ir::Function f16 = corpus_kernel("gemm_f16");
  const ir::Function bf16 = corpus_kernel("gemm_bf16_acc_bf16");
  // On sm_90a with TMA-able rows the f16 loop is pipelined onto wgmma instead (tested above).
  for (backend::cuda::Arch arch : {kSm80, kSm90a}) {
    EXPECT_TRUE(
        has(build(f16, arch.major == 9 ? unaligned_spec(f16, arch) : aligned_spec(f16, arch))
                .compiled.ptx,
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"))
        << arch.str();
    EXPECT_TRUE(has(build(bf16, aligned_spec(bf16, arch)).compiled.ptx,
                    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"))
        << arch.str();
  }
}

TEST(EmittedCode, F32MmaTakesTheCudaCoreLoop) {
  const ir::Function f = corpus_kernel("gemm_f32");
  EXPECT_FALSE(has(build(f, aligned_spec(f, kSm90a)).compiled.ptx, "mma.sync"));
  EXPECT_FALSE(has(build(f, aligned_spec(f, kSm80)).compiled.ptx, "tf32"));
}

TEST(EmittedCode, F32MmaAskedForTf32RunsOnTf32TensorCores) {
  const ir::Function f = corpus_kernel("gemm_tf32");
  EXPECT_NE(ir::print(f).find(" tf32 :"), std::string::npos) << ir::print(f);
  for (const backend::cuda::Arch arch : {kSm80, kSm90a}) {
    const Built b = build(f, aligned_spec(f, arch));
    EXPECT_TRUE(has(b.compiled.ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"))
        << arch.str();
    EXPECT_TRUE(has(b.compiled.ptx, "cvt.rna.tf32.f32")) << arch.str();
  }
}

TEST(EmittedCode, RowReductionsShuffleWithinWarps) {
  for (const char* name : {"softmax_rows", "softmax_f16", "rmsnorm_f16"}) {
    const ir::Function f = corpus_kernel(name);
    EXPECT_TRUE(has(build(f, aligned_spec(f, kSm90a)).compiled.ptx, "shfl.sync.bfly")) << name;
  }
}

TEST(EmittedCode, UnpaddedLoadsReportThroughTheErrorFlag) {
  const ir::Function f = corpus_kernel("unpadded");
  const Built b = build(f, aligned_spec(f, kSm90a));
  EXPECT_TRUE(has(kernel_part(b.kernel.source), "tsr_bounds("));
  // A module-scope global the host finds by name (cuModuleGetGlobal), unmangled.
  EXPECT_TRUE(has(b.compiled.ptx, ".global .align 4 .u32 tessera_error;")) << b.compiled.ptx;
  EXPECT_TRUE(has(b.compiled.ptx, "tessera_error_info"));
  // A padded load never checks.
  const ir::Function padded = corpus_kernel("add_f32");
  EXPECT_FALSE(
      has(kernel_part(build(padded, aligned_spec(padded, kSm90a)).kernel.source), "tsr_bounds("));
}

TEST(EmittedCode, OnlyKernelsWithARunTimeCheckReportErrors) {
  // The host reads the error report after a launch only when the kernel can write it.
  const ir::Function unpadded = corpus_kernel("unpadded");
  EXPECT_TRUE(backend::cuda::emit(unpadded, aligned_spec(unpadded, kSm90a)).reports_errors);
  // A loop whose step is a positive constant cannot fail: no check, no report.
  for (const char* name : {"add_f32", "softmax_f16", "gemm_f16", "control", "nested"}) {
    const ir::Function f = corpus_kernel(name);
    const backend::cuda::EmittedKernel k = backend::cuda::emit(f, aligned_spec(f, kSm90a));
    EXPECT_FALSE(k.reports_errors) << name;
    EXPECT_FALSE(has(kernel_part(k.source), "tsr_report(")) << name;
  }
}

TEST(EmittedCode, LargeElementwiseTilesRunAsSeveralBlocks) {
  // 16384 f16 elements at 8 a thread: 2048 threads for the tile, as 4 blocks of 512.
  const ir::Function add = corpus_kernel("add_f16_large_tile");
  const backend::cuda::EmittedKernel big = backend::cuda::emit(add, aligned_spec(add, kSm90a));
  EXPECT_EQ(big.threads, 512);
  EXPECT_EQ(big.blocks_per_tile, 4);
  const std::string code = kernel_part(big.source);
  EXPECT_TRUE(has(code, "__launch_bounds__(512)")) << code;
  EXPECT_TRUE(has(code, "vblk < grid.total * 4")) << code;
  EXPECT_TRUE(has(code, "const int tid = (int)(vblk % 4) * 512 + (int)threadIdx.x;")) << code;
  EXPECT_TRUE(has(code, "(k * 2048 + tid) * 8")) << code;
  // Threads that share values (a reduction's shuffles and shared memory, a repeated store's
  // barrier, mma fragments) keep a tile in one block.
  // So does an elementwise-looking kernel whose code turns out to share one (a loaded element
  // broadcast through shared memory): emit() plans it again as one block.
  for (const char* name : {"softmax_f16", "gemm_f16", "rmsnorm_f16", "scale_by_loaded_element"}) {
    const ir::Function f = corpus_kernel(name);
    EXPECT_EQ(backend::cuda::emit(f, aligned_spec(f, kSm90a)).blocks_per_tile, 1) << name;
  }
}

TEST(EmittedCode, KernelDeclaresItsThreadsAndSharedMemory) {
  const ir::Function add = corpus_kernel("add_f32");
  const backend::cuda::EmittedKernel a = backend::cuda::emit(add, aligned_spec(add, kSm90a));
  EXPECT_EQ(a.entry, "tessera_add");
  EXPECT_TRUE(has(a.source, "__launch_bounds__(" + std::to_string(a.threads) + ") tessera_add("));
  EXPECT_EQ(a.shared_bytes, 0u);
  // gemm_f16 without 16-byte aligned rows stages a [64, 32] and b [32, 64] as f16 with rows
  // padded to 32 + 8 halves; with them, it is pipelined: four stages of 8 KB on sm_80.
  const ir::Function gemm = corpus_kernel("gemm_f16");
  EXPECT_EQ(backend::cuda::emit(gemm, unaligned_spec(gemm, kSm80)).shared_bytes,
            (64u * 40 + 64u * 40) * 2);
  EXPECT_EQ(backend::cuda::emit(gemm, aligned_spec(gemm, kSm80)).shared_bytes,
            4u * (64 * 32 + 32 * 64) * 2);
  // Pipelined on sm_90a: six stages of a [64, 32] and b [32, 64] (8 KB each), after the
  // epilogue's scratch (none here), plus 1024 bytes to align the ring.
  const backend::cuda::EmittedKernel p = backend::cuda::emit(gemm, aligned_spec(gemm, kSm90a));
  EXPECT_EQ(p.shared_bytes, 6u * (64 * 32 + 32 * 64) * 2 + 1024);
  EXPECT_EQ(p.threads, 128 + 128);
  EXPECT_TRUE(has(p.source, "__launch_bounds__(256, 1) tessera_gemm_f16("))
      << kernel_part(p.source);
}

TEST(EmittedCode, CommentsCarryTheIrTextAndTheUsersLine) {
  const ir::Function f = corpus_kernel("add_f32");
  const std::string code = kernel_part(backend::cuda::emit(f, aligned_spec(f, kSm90a)).source);
  // The line of the add as TESSERA_DUMP=ir prints it, and the variable named after its result.
  const std::string ir = ir::print(f);
  const size_t at = ir.find(" = add ");
  ASSERT_NE(at, std::string::npos);
  const size_t begin = ir.rfind('%', at), end = ir.find('\n', at);
  const std::string line = ir.substr(begin, end - begin);
  EXPECT_TRUE(has(code, "cuda_codegen/corpus.cpp:")) << code;
  EXPECT_TRUE(has(code, "  " + line + "\n")) << line << "\n" << code;
  const std::string result = line.substr(1, line.find(' ') - 1);
  EXPECT_TRUE(has(code, " v" + result + "[i] = tsr_add(")) << code;
}

TEST(EmittedCode, SharedMemoryBeyondTheArchitectureIsAKernelErrorAtTheUsersLine) {
  const SourceLoc here = SourceLoc::current();
  const ir::Function f = prepared(trace_kernel<Out<float>, In<float>>(
      "big_transpose", {out_param("z", DType::F32, {256, 256}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) { z.store(load_like(x, z).transpose()); }));
  try {
    backend::cuda::emit(f, aligned_spec(f, kSm90a));
    FAIL() << "a 256 KB staging buffer was accepted";
  } catch (const KernelError& e) {
    const std::string what = e.what();
    // load_t's staging: 256 rows of 256 + 1 floats (rows padded against bank conflicts).
    EXPECT_TRUE(has(what, "263168 bytes of shared memory")) << what;
    EXPECT_TRUE(has(what, "232448 bytes sm_90a allows")) << what;
    EXPECT_TRUE(has(what, "emitted_code_test.cpp:" + std::to_string(here.line + 3))) << what;
  }
}

TEST(EmittedCode, FastNumericsTakeTheApproximateInstructionsAndExactOnesDoNot) {
  // Softmax: exp through ex2.approx.ftz, the division by the row's sum through one reciprocal, the
  // row max through max.NaN (NaN still propagates). Exact keeps libm's expf and IEEE division.
  for (const ir::Numerics n : {ir::Numerics::exact, ir::Numerics::fast}) {
    ir::Function f = corpus_kernel("softmax_f16");
    f.numerics = n;
    const Built b = build(f, aligned_spec(f, kSm90a));
    const std::string source = kernel_part(b.kernel.source);
    const bool fast = n == ir::Numerics::fast;
    EXPECT_EQ(has(source, "tsr_exp_fast("), fast) << source;
    EXPECT_EQ(has(source, "__fdividef("), fast) << source;
    EXPECT_EQ(has(source, "tsr_max_fast("), fast) << source;
    EXPECT_EQ(has(b.compiled.ptx, "max.NaN.f32"), fast) << b.compiled.ptx;
    EXPECT_EQ(has(b.compiled.ptx, "div.rn.f32"), !fast) << b.compiled.ptx;
    EXPECT_TRUE(has(b.compiled.ptx, "ex2.approx")) << b.compiled.ptx;  // expf uses it too
  }
}

TEST(EmittedCode, LoadTransposedReadsStraightIntoSharedMemory) {
  // load_t: the tile is read with 16-byte accesses along the tensor's rows and landed transposed
  // in shared memory; no register array holds the untransposed tile. A transpose that feeds an
  // mma keeps the mma's own staging.
  auto f = trace_kernel<Out<half>, In<half>>(
      "load_t_f16", {out_param("z", DType::F16, {64, 32}), in_param("x", DType::F16, 2)},
      [](Out<half> z, In<half> x) {
        z.store(load_t(x, {tile_index(0), tile_index(1)}, z.shape()));
      });
  analysis::promote_locals(f);
  for (const auto& arch : {kSm80, kSm90a}) {
    const Built b = build(f, aligned_spec(f, arch));
    const std::string src = kernel_part(b.kernel.source);
    EXPECT_TRUE(has(src, "(landed in shared memory by the op that uses it)")) << src;
    EXPECT_TRUE(has(src, "landed permuted")) << src;
    EXPECT_TRUE(has(src, "tsr_ld_words(tb + off, w);")) << src;
    EXPECT_FALSE(has(src, "float v2[")) << "the untransposed tile took registers:\n" << src;
    EXPECT_TRUE(has(b.compiled.ptx, "ld.global.nc.v4.u32")) << b.compiled.ptx;
  }
}

TEST(EmittedCode, Fp8TakesTheHardwareConversionOnHopperAndIntegerCodeOnAmpere) {
  auto f = trace_kernel<Out<float8_e4m3>, In<float>>(
      "to_e4m3", {out_param("z", DType::F8E4M3, {256}), in_param("x", DType::F32, 1)},
      [](Out<float8_e4m3> z, In<float> x) { z.store(load_like(x, z).cast<float8_e4m3>()); });
  analysis::promote_locals(f);
  EXPECT_TRUE(has(build(f, aligned_spec(f, kSm90a)).compiled.ptx, "cvt.rn.satfinite.e4m3x2.f32"));
  EXPECT_FALSE(has(build(f, aligned_spec(f, kSm80)).compiled.ptx, "e4m3x2"));
}

}  // namespace
}  // namespace tessera::test

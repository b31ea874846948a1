// The layout pass (DESIGN §6): which layout each value gets, and which conversions it asks for.
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "corpus.hpp"
#include "runtime/scoped_env.hpp"
#include "tessera/backend/cuda/codegen.hpp"
#include "tessera/backend/cuda/layout.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
using backend::cuda::Layout;
using backend::cuda::LayoutKind;
using backend::cuda::LayoutPlan;

LayoutPlan plan(const ir::Function& f, bool aligned = true) {
  return backend::cuda::plan_layouts(f,
                                     aligned ? aligned_spec(f, kSm90a) : unaligned_spec(f, kSm90a));
}

const ir::Op& first(const ir::Block& b, ir::OpKind k) {
  const ir::Op* found = nullptr;
  ir::walk(b, [&](const ir::Op& op) {
    if (!found && op.kind == k) found = &op;
  });
  if (!found) throw std::runtime_error("no such op");
  return *found;
}

// How many times `what` appears in `src` (lines of emitted code counted by a marker).
size_t occurrences(const std::string& src, const std::string& what) {
  size_t n = 0;
  for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++n;
  return n;
}

// x minus its row mean, over the row's root mean square (a LayerNorm without weights) of T rows
// `cols` wide, traced and prepared: the three-pass shape of a streamed norm.
template <Element T>
ir::Function long_norm(const std::string& name, int64_t cols) {
  return prepared(trace_kernel<Out<T>, In<T>>(
      name, {out_param("z", dtype_v<T>, {1, cols}), in_param("x", dtype_v<T>, 2)},
      [cols](Out<T> z, In<T> x) {
        const float inv = 1.0f / static_cast<float>(cols);
        auto v = load_like(x, z).template cast<float>();
        auto d = v - sum(v, 1) * inv;
        z.store((d * rsqrt(sum(d * d, 1) * inv + 1e-5f)).template cast<T>());
      }));
}

bool inside(const ir::Block& b, const ir::Op* op) {
  bool in = false;
  ir::walk(b, [&](const ir::Op& o) { in |= &o == op; });
  return in;
}

TEST(LayoutPlan, GemmAccumulatorStaysInMmaFragmentsAcrossTheLoop) {
  const ir::Function f = corpus_kernel("gemm_f16");
  const LayoutPlan p = plan(f);
  const ir::Op& loop = first(f.body, ir::OpKind::For);
  const ir::Op& mma = first(f.body, ir::OpKind::Mma);
  EXPECT_EQ(p.of[loop.results[0]].kind, LayoutKind::MmaAcc);
  EXPECT_EQ(p.of[loop.regions[0].args[1]].kind, LayoutKind::MmaAcc);
  EXPECT_EQ(p.of[mma.results[0]].kind, LayoutKind::MmaAcc);
  // Both operands are loads that land in shared memory directly.
  EXPECT_EQ(p.of[mma.operands[0]].kind, LayoutKind::Shared);
  EXPECT_EQ(p.of[mma.operands[1]].kind, LayoutKind::Shared);
  // The only conversion fills the accumulator from the zeros before the loop; none inside it.
  ASSERT_EQ(p.convert.size(), 1u);
  EXPECT_EQ(p.convert.begin()->first.first, &loop);
  for (const auto& [key, to] : p.convert) EXPECT_FALSE(inside(loop.regions[0], key.first));
}

TEST(LayoutPlan, SoftmaxRowsReduceIntoSlicesAndNeedNoConversion) {
  const ir::Function f = corpus_kernel("softmax_rows");
  const LayoutPlan p = plan(f);
  int reductions = 0;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::ReduceMax || op.kind == ir::OpKind::ReduceSum) {
      ++reductions;
      EXPECT_EQ(p.of[op.results[0]], (Layout{LayoutKind::Slice, {8, 256}}));
    }
  });
  EXPECT_EQ(reductions, 2);
  EXPECT_TRUE(p.convert.empty());
}

TEST(LayoutPlan, ReductionsOfOtherAxesOrShapesTakeTheDistributedFallback) {
  const ir::Function f = corpus_kernel("reduce_fallback");
  const LayoutPlan p = plan(f);
  int reductions = 0;
  ir::walk(f.body, [&](const ir::Op& op) {
    if (ir::op_info(op.kind).cls == ir::OpClass::Reduce) {
      ++reductions;
      EXPECT_EQ(p.of[op.results[0]].kind, LayoutKind::Distributed) << ir::mnemonic(op.kind);
    }
  });
  EXPECT_GE(reductions, 6);
}

TEST(LayoutPlan, CudaCoreMmaAccumulatesInTheDistributedLayout) {
  for (const char* name : {"gemm_f32", "gemm_f64", "gemm_i8"}) {
    const ir::Function f = corpus_kernel(name);
    const LayoutPlan p = plan(f);
    EXPECT_EQ(p.of[first(f.body, ir::OpKind::Mma).results[0]].kind, LayoutKind::Distributed)
        << name;
    EXPECT_EQ(p.of[first(f.body, ir::OpKind::For).results[0]].kind, LayoutKind::Distributed)
        << name;
  }
}

TEST(LayoutPlan, RankZeroValuesAreUniform) {
  for (const CorpusKernel& k : corpus()) {
    const ir::Function f = prepared(k.make());
    const LayoutPlan p = plan(f);
    for (size_t v = 0; v < f.values.size(); ++v) {
      if (!f.values[v].is_scalar()) continue;
      EXPECT_EQ(p.of[v].kind, LayoutKind::Uniform) << k.name << " %" << v;
    }
  }
}

TEST(LayoutPlan, VectorWidthFollowsDtypeAndAlignment) {
  const ir::Function add32 = corpus_kernel("add_f32"), add16 = corpus_kernel("add_f16");
  EXPECT_EQ(plan(add32).vec, 4);  // 16 bytes of f32
  EXPECT_EQ(plan(add16).vec, 8);  // 16 bytes of f16
  EXPECT_EQ(plan(add32, false).vec, 1);
  backend::cuda::KernelSpec eight = aligned_spec(add32, kSm80);
  for (auto& t : eight.tensors) t.vector_bytes = 8;
  EXPECT_EQ(backend::cuda::plan_layouts(add32, eight).vec, 2);
}

TEST(LayoutPlan, EachThreadHoldsAFewElementsOfTheLargestTile) {
  // Eight elements a thread: 1024 -> 128 threads, 2048 -> 256, whatever the vector width.
  EXPECT_EQ(plan(corpus_kernel("add_f32")).threads, 128);
  EXPECT_EQ(plan(corpus_kernel("add_f32"), false).threads, 128);
  EXPECT_EQ(plan(corpus_kernel("add_f16")).threads, 256);
  // 32 in a kernel that reduces: softmax_f16's [1, 4096] row -> 128 threads.
  EXPECT_EQ(plan(corpus_kernel("softmax_f16")).threads, 128);
  // A 64x64 f32 accumulator is 32 fragments of 16x8: at least four warps of eight.
  EXPECT_GE(plan(corpus_kernel("gemm_f16")).threads, 128);
  // gemm_f16_ragged: the [40, 20] operand tile counts (800 / 8 -> 128 threads); the [40, 24]
  // accumulator does not, as it is stored from its fragments.
  EXPECT_EQ(plan(corpus_kernel("gemm_f16_ragged")).threads, 128);
  // An elementwise kernel keeps eight a thread past 512 threads, in several blocks of 512:
  // 16384 f16 -> 2048 threads, 4 blocks.
  const LayoutPlan large = plan(corpus_kernel("add_f16_large_tile"));
  EXPECT_EQ(large.threads, 2048);
  EXPECT_EQ(large.blocks_per_tile, 4);
  for (const CorpusKernel& k : corpus()) {
    const LayoutPlan p = plan(prepared(k.make()));
    EXPECT_GE(p.threads, 32) << k.name;
    EXPECT_LE(p.threads / p.blocks_per_tile, 512) << k.name << ": threads a block";
    EXPECT_EQ(p.threads & (p.threads - 1), 0) << k.name;
    EXPECT_EQ(p.threads % p.blocks_per_tile, 0) << k.name;
  }
}

// A store_part's threads are sized by its piece, not by the tile it lands in: one [1, 128] row
// stored into a tile of 4096 rows (a decode step's cache append) is a 32-thread block's work, as
// the same row stored whole is.
TEST(LayoutPlan, AStorePartIsSizedByItsPieceNotByItsTile) {
  const ir::Function append = prepared(trace_kernel<Out<float>, In<float>, In<int32_t>>(
      "row_into_tall_tile",
      {out_param("cache", DType::F32, {4096, 128}), in_param("x", DType::F32, 2),
       in_param("at", DType::I32, 1)},
      [](Out<float> cache, In<float> x, In<int32_t> at) {
        const Index p = load(at, {tile_index(0)}, {1}).reshape({});
        const Tile<float> row = load(x, {tile_index(0), 0}, {1, 128});
        cache.store_part(row * rsqrt(sum(row * row, 1)), {p, 0});
      }));
  const LayoutPlan p = plan(append);
  EXPECT_EQ(p.threads, 32);  // [1, 128], 32 elements a thread in a kernel that reduces
  EXPECT_FALSE(p.stream_rows);
  // Not a one-pass row-wise kernel: no occupancy request (under it the engine's kernel spilled).
  EXPECT_EQ(p.min_blocks, 0);
  // A whole-tile store still sizes the block by its tile.
  EXPECT_EQ(plan(corpus_kernel("store_parts")).threads, 128);  // [4, 256] bf16: 1024 / 8
}

// A matrix-vector product (rows of w against x's row broadcast over them, summed along K) asks for
// 1024 resident threads, as softmax does (at 768 decode's q/k/v projection ran a tail wave), and
// keeps a block a tile; RMSNorm, whose weight row is a quarter of its tile, asks for 1024 too, and
// a kernel loading two rows of its tile's size with no broadcast product for 768.
TEST(LayoutPlan, AMatrixVectorProductAsksForAThousandResidentThreads) {
  const ir::Function matvec = prepared(trace_kernel<Out<float>, In<float>, In<float>>(
      "rows_times_row",
      {out_param("y", DType::F32, {1, 2}), in_param("x", DType::F32, 2),
       in_param("w", DType::F32, 2)},
      [](Out<float> y, In<float> x, In<float> w) {
        y.store(
            sum(load(w, {tile_index(1), 0}, {2, 2048}) * load(x, {tile_index(0), 0}, {1, 2048}), 1)
                .reshape({1, 2}));
      }));
  const LayoutPlan p = plan(matvec);
  EXPECT_EQ(p.threads, 128);  // 4096 elements, 32 a thread
  EXPECT_EQ(p.min_blocks, 8);
  EXPECT_EQ(p.blocks_per_sm, 0);
  EXPECT_EQ(plan(corpus_kernel("rmsnorm_f16")).min_blocks, 8);

  // Two weight tiles against one broadcast row (SwiGLU's gate and up, kernels/src/linear.cpp):
  // a persistent grid of those resident blocks, prefetching its next rows.
  const ir::Function gate_up = prepared(trace_kernel<Out<float>, In<float>, In<float>, In<float>>(
      "gate_up_rows",
      {out_param("y", DType::F32, {1, 2}), in_param("x", DType::F32, 2),
       in_param("g", DType::F32, 2), in_param("u", DType::F32, 2)},
      [](Out<float> y, In<float> x, In<float> g, In<float> u) {
        auto xr = load(x, {tile_index(0), 0}, {1, 2048});
        auto gate = sum(load(g, {tile_index(1), 0}, {2, 2048}) * xr, 1);
        auto up = sum(load(u, {tile_index(1), 0}, {2, 2048}) * xr, 1);
        y.store((gate * up).reshape({1, 2}));
      }));
  const LayoutPlan gu = plan(gate_up);
  EXPECT_EQ(gu.min_blocks, 8);
  EXPECT_EQ(gu.blocks_per_sm, 8);
  EXPECT_EQ(gu.prefetch_next_tile, 1);

  // Two rows of the tile's size and no broadcast product (a norm of a sum, say): 768.
  const ir::Function two_rows = prepared(trace_kernel<Out<float>, In<float>, In<float>>(
      "sum_of_two_rows",
      {out_param("y", DType::F32, {1, 1}), in_param("a", DType::F32, 2),
       in_param("b", DType::F32, 2)},
      [](Out<float> y, In<float> a, In<float> b) {
        y.store(
            sum(load(a, {tile_index(0), 0}, {1, 4096}) + load(b, {tile_index(0), 0}, {1, 4096}), 1)
                .reshape({1, 1}));
      }));
  EXPECT_EQ(plan(two_rows).min_blocks, 6);
}

// A kernel that reduces inside a loop (decode attention's chunks, linear's K loop) is left to the
// compiler's registers; TESSERA_AB_LOOP_RESIDENT (an A/B switch) asks for that many resident
// threads, still a block a tile; a kernel with mma keeps no request.
TEST(LayoutPlan, ALoopOfReductionsAsksForResidentThreadsOnlyUnderItsSwitch) {
  const ir::Function loop = prepared(trace_kernel<Out<float>, In<float>>(
      "sums_in_a_loop", {out_param("y", DType::F32, {1, 32}), in_param("x", DType::F32, 2)},
      [](Out<float> y, In<float> x) {
        Tile<float> acc = Tile<float>::zeros({1, 32});
        for_range(0, 4, [&](Index k) {
          acc = acc + sum(load(x, {tile_index(0), k}, {32, 128}), 1).reshape({1, 32});
        });
        y.store(acc);
      }));
  const LayoutPlan unbounded = plan(loop);
  EXPECT_EQ(unbounded.threads, 128);  // [32, 128], 32 elements a thread
  EXPECT_EQ(unbounded.min_blocks, 0);
  ScopedEnv resident("TESSERA_AB_LOOP_RESIDENT", "384");
  const LayoutPlan three = plan(loop);
  EXPECT_EQ(three.min_blocks, 3);
  EXPECT_EQ(three.blocks_per_sm, 0);
  const backend::cuda::EmittedKernel k = backend::cuda::emit(loop, aligned_spec(loop, kSm90a));
  EXPECT_NE(k.source.find("__launch_bounds__(128, 3)"), std::string::npos) << k.source;
  EXPECT_EQ(plan(corpus_kernel("softmax_f16")).min_blocks, 8);
  // Not a kernel with mma, even one whose f32 mma leaves the block at one warp's worth, nor one
  // that stores its tile in pieces.
  const ir::Function mma_loop = prepared(trace_kernel<Out<float>, In<float>, In<float>>(
      "mma_sums_in_a_loop",
      {out_param("y", DType::F32, {1, 16}), in_param("a", DType::F32, 2),
       in_param("b", DType::F32, 2)},
      [](Out<float> y, In<float> a, In<float> b) {
        Tile<float> acc = Tile<float>::zeros({1, 16});
        for_range(0, 4, [&](Index k) {
          const Tile<float> s = mma(load(a, {tile_index(0), k}, {16, 16}),
                                    load(b, {k, 0}, {16, 16}), Tile<float>::zeros({16, 16}));
          acc = acc + sum(s, 1).reshape({1, 16});
        });
        y.store(acc);
      }));
  EXPECT_EQ(plan(mma_loop).min_blocks, 0);
  const ir::Function pieces_loop = prepared(trace_kernel<Out<float>, In<float>>(
      "pieces_after_a_loop", {out_param("y", DType::F32, {2, 32}), in_param("x", DType::F32, 2)},
      [](Out<float> y, In<float> x) {
        Tile<float> acc = Tile<float>::zeros({1, 32});
        for_range(0, 4, [&](Index k) {
          acc = acc + sum(load(x, {tile_index(0), k}, {32, 128}), 1).reshape({1, 32});
        });
        y.store_part(acc, {Index::zeros({}), Index::zeros({})});
        y.store_part(acc * 2.0f, {Index::zeros({}) + 1, Index::zeros({})});
      }));
  EXPECT_EQ(plan(pieces_loop).min_blocks, 0);
}

TEST(LayoutPlan, RowWiseKernelsAskForAThousandResidentThreads) {
  // A reduction whose threads hold at most 32 elements each, loading one row-sized tile:
  // 1024 / T blocks a multiprocessor, and a block per tile.
  const LayoutPlan softmax = plan(corpus_kernel("softmax_f16"));
  EXPECT_EQ(softmax.threads, 128);  // 4096 columns, 32 a thread
  EXPECT_EQ(softmax.min_blocks, 8);
  EXPECT_EQ(softmax.blocks_per_sm, 0);
  EXPECT_EQ(plan(corpus_kernel("rmsnorm_f16")).min_blocks, 8);  // its weight row is 1/4 of a tile
  // Elementwise kernels and mma kernels are left to the compiler.
  EXPECT_EQ(plan(corpus_kernel("add_f32")).min_blocks, 0);
  EXPECT_EQ(plan(corpus_kernel("gemm_f16")).min_blocks, 0);
  // A row so long that each of 512 threads holds 128 elements would spill under a 64-register cap.
  const ir::Function long_row = prepared(trace_kernel<Out<float>, In<float>>(
      "long_row_sum", {out_param("z", DType::F32, {1, 65536}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) {
        auto t = load_like(x, z);
        z.store(t - sum(t, 1));
      }));
  const LayoutPlan p = plan(long_row);
  EXPECT_EQ(p.threads, 512);
  EXPECT_EQ(p.min_blocks, 0);
  EXPECT_EQ(p.blocks_per_sm, 0);
  // It streams its rows instead (Emitter::plan_streaming): the input is re-read at each use.
  EXPECT_TRUE(p.stream_rows);
  EXPECT_FALSE(plan(corpus_kernel("softmax_f16")).stream_rows);
}

TEST(EmittedCode, LongRowsAreStreamedAFewVectorsAtATimeAndCompile) {
  // Softmax of 65536-wide f16 rows: the loaded row, its exponentials and their quotient are never
  // held; both reductions and the epilogue loop over the thread's 16 vectors four at a time
  // (LayoutPlan::stream_group), re-reading x.
  const ir::Function softmax = prepared(trace_kernel<Out<half>, In<half>>(
      "long_softmax", {out_param("z", DType::F16, {1, 65536}), in_param("x", DType::F16, 2)},
      [](Out<half> z, In<half> x) {
        auto v = load_like(x, z, Pad::neg_inf()).cast<float>();
        auto e = exp(v - max(v, 1));
        z.store((e / sum(e, 1)).cast<half>());
      }));
  const Built b = build(softmax, aligned_spec(softmax, kSm90a));
  const std::string& src = b.kernel.source;
  size_t loops = 0;
  for (size_t at = src.find("for (int kv = 0; kv < 4; ++kv)"); at != std::string::npos;
       at = src.find("for (int kv = 0; kv < 4; ++kv)", at + 1))
    ++loops;
  EXPECT_EQ(loops, 3u) << src;  // max, sum, and the epilogue
  EXPECT_NE(src.find("(recomputed at each use: the row is streamed)"), std::string::npos);
  EXPECT_NE(src.find("float p = -tsr_inf_f32();"), std::string::npos) << src;
  EXPECT_FALSE(b.compiled.ptx.empty());
}

TEST(EmittedCode, StreamedPassesCanIssueSeveralVectorsLoadsUnderOneTileTest) {
  // A step of one vector tests once that the tile is inside, then loads it: one 16-byte load in
  // flight per thread, which leaves a long-row softmax waiting on latency. A step of G vectors
  // (stream_group: 4 by default; TESSERA_AB_STREAM_GROUP
  // overrides it) issues G loads under one test, and combines the same elements in the same
  // order (results unchanged).
  const ir::Function softmax = prepared(trace_kernel<Out<bfloat16>, In<bfloat16>>(
      "long_softmax_bf16", {out_param("z", DType::BF16, {1, 65536}), in_param("x", DType::BF16, 2)},
      [](Out<bfloat16> z, In<bfloat16> x) {
        auto v = load_like(x, z, Pad::neg_inf()).cast<float>();
        auto e = exp(v - max(v, 1));
        z.store((e / sum(e, 1)).cast<bfloat16>());
      }));
  Built one;
  {
    ScopedEnv group("TESSERA_AB_STREAM_GROUP", "1");
    one = build(softmax, aligned_spec(softmax, kSm90a));
  }
  // x's load in the first pass (a fast and an edge path) and its copy into shared memory, its
  // two reads back from there (Emitter::plan_stash), and z's store (a fast and an edge path).
  EXPECT_EQ(occurrences(one.kernel.source, "for (int k = kv; k < kv + 1; ++k)"), 7u);
  const Built four = build(softmax, aligned_spec(softmax, kSm90a));
  const std::string& src = four.kernel.source;
  EXPECT_EQ(occurrences(src, "for (int kv = 0; kv < 4; ++kv)"), 3u) << src;  // max, sum, epilogue
  EXPECT_EQ(occurrences(src, "for (int k = kv * 4; k < kv * 4 + 4; ++k)"), 7u) << src;
  EXPECT_NE(src.find("for (int e = 0; e < 32; ++e) p = "), std::string::npos) << src;
  EXPECT_NE(src.find("[kv * 4 * 8 + e]"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int i = kv * 4 * 8; i < (kv * 4 + 4) * 8; ++i)"), std::string::npos)
      << src;
  EXPECT_FALSE(four.compiled.ptx.empty());
}

TEST(EmittedCode, AStreamedRowIsReadFromMemoryOnceAndKeptInSharedMemoryForItsLaterPasses) {
  // LayerNorm over 65536 bf16 columns: three passes over x (mean, variance, output). The first
  // reads x from memory and keeps it (128 KB a block) in shared memory; the other two read it
  // back from there, each thread its own vectors (so no barrier between).
  const ir::Function norm = long_norm<bfloat16>("long_norm_bf16", 65536);
  const Built b = build(norm, aligned_spec(norm, kSm90a));
  const std::string& src = b.kernel.source;
  ASSERT_TRUE(plan(norm).stream_rows);
  EXPECT_EQ(occurrences(src, "tsr_ld_words(tb + off, w);"), 1u) << src;  // x, once
  EXPECT_EQ(occurrences(src, "Kept in shared memory for the row's later passes"), 1u) << src;
  EXPECT_EQ(occurrences(src, "Read back from shared memory"), 2u) << src;
  EXPECT_NE(src.find("[0, 131072) ops [0, "), std::string::npos) << src;
  EXPECT_GE(b.kernel.shared_bytes, 131072u);
  EXPECT_FALSE(b.compiled.ptx.empty());
  {  // The A/B switch: each pass reads x from memory again, no shared memory for it.
    ScopedEnv off("TESSERA_AB_STREAM_STASH", "0");
    const Built again = build(norm, aligned_spec(norm, kSm90a));
    EXPECT_EQ(occurrences(again.kernel.source, "tsr_ld_words(tb + off, w);"), 3u);
    EXPECT_EQ(occurrences(again.kernel.source, "Read back from shared memory"), 0u);
    EXPECT_LT(again.kernel.shared_bytes, 1024u);
  }
  // f32 rows of 65536 (256 KB) do not fit beside the rest: read three times, as before.
  const ir::Function wide = long_norm<float>("long_norm_f32", 65536);
  const Built f32 = build(wide, aligned_spec(wide, kSm90a));
  EXPECT_EQ(occurrences(f32.kernel.source, "Read back from shared memory"), 0u);
  EXPECT_EQ(occurrences(f32.kernel.source, "tsr_ld_words(tb + off, w);"), 3u);
  // f32 rows of 32768 (128 KB) do (GpuDifferential.SoftmaxF32LongRowsKeptInSharedMemory).
  const ir::Function half_wide = long_norm<float>("norm_f32_32768", 32768);
  ASSERT_TRUE(plan(half_wide).stream_rows);
  const Built f32_kept = build(half_wide, aligned_spec(half_wide, kSm90a));
  EXPECT_EQ(occurrences(f32_kept.kernel.source, "Read back from shared memory"), 2u);
  EXPECT_EQ(occurrences(f32_kept.kernel.source, "tsr_ld_words(tb + off, w);"), 1u);
  // The GPU test's kernel (GpuDifferential.SoftmaxF32LongRowsKeptInSharedMemory): a softmax whose
  // ragged rows read -inf past the edge, kept too (the pad is in the registers it keeps).
  const ir::Function softmax = prepared(trace_kernel<Out<float>, In<float>>(
      "softmax_f32_32768", {out_param("z", DType::F32, {1, 32768}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) {
        auto v = load_like(x, z, Pad::neg_inf());
        auto e = exp(v - max(v, 1));
        z.store(e / sum(e, 1));
      }));
  const Built kept_softmax = build(softmax, aligned_spec(softmax, kSm90a));
  EXPECT_EQ(occurrences(kept_softmax.kernel.source, "Read back from shared memory"), 2u);
  // PTX for sm_80 may run on an sm_86 (99 KB a block): the 128 KB row is re-read there.
  const Built ampere = build(norm, aligned_spec(norm, kSm80));
  EXPECT_EQ(occurrences(ampere.kernel.source, "Read back from shared memory"), 0u);
  EXPECT_LT(ampere.kernel.shared_bytes, 1024u);
}

TEST(EmittedCode, AStreamedRowIsKeptOnlyInWhatTheKernelsOtherBuffersLeave) {
  // Beside the streamed softmax, a 32768-element f32 prefix sum stages 128 KB in shared memory:
  // the 128 KB row no longer fits beside it (232448 bytes on sm_90a), so it is re-read at each
  // pass, and the kernel compiles (it did before the stash; the stash must not break it).
  const ir::Function f = prepared(trace_kernel<Out<float>, Out<bfloat16>, In<float>, In<bfloat16>>(
      "scan_beside_long_softmax",
      {out_param("c", DType::F32, {1, 32768}), out_param("z", DType::BF16, {1, 65536}),
       in_param("y", DType::F32, 2), in_param("x", DType::BF16, 2)},
      [](Out<float> c, Out<bfloat16> z, In<float> y, In<bfloat16> x) {
        c.store(cumsum(load_like(y, c), 1));
        auto v = load_like(x, z, Pad::neg_inf()).cast<float>();
        auto e = exp(v - max(v, 1));
        z.store((e / sum(e, 1)).cast<bfloat16>());
      }));
  ASSERT_TRUE(plan(f).stream_rows);
  const Built b = build(f, aligned_spec(f, kSm90a));
  EXPECT_NE(b.kernel.source.find("(recomputed at each use: the row is streamed)"),
            std::string::npos);
  EXPECT_EQ(b.kernel.source.find("Read back from shared memory"), std::string::npos);
  EXPECT_LE(b.kernel.shared_bytes, 232448u);
  EXPECT_FALSE(b.compiled.ptx.empty());
}

TEST(EmittedCode, TheTileLoopRederivesTheThreadIndexInEachTile) {
  // The body's thread index is re-derived for each tile the block walks, so tile-invariant
  // address arithmetic is not hoisted out of the tile loop (codegen.cpp, run); lane and warp,
  // which nothing is computed from, stay before it.
  const ir::Function norm = corpus_kernel("rmsnorm_f16");  // a row and a weight row
  const Built b = build(norm, aligned_spec(norm, kSm90a));
  const std::string& src = b.kernel.source;
  const size_t loop =
      src.find("for (long long blk = blockIdx.x; blk < grid.total; blk += gridDim.x)");
  ASSERT_NE(loop, std::string::npos) << src;
  const size_t at = src.find("const int tid = (int)threadIdx.x + (int)tsr_zero_of(blk);");
  ASSERT_NE(at, std::string::npos) << src;
  EXPECT_GT(at, loop);  // inside the tile loop,
  const size_t entry = src.find(b.kernel.entry + "(");
  ASSERT_NE(entry, std::string::npos) << src;
  // The kernel's first tid is that one (no other is declared before the loop), and it is the
  // kernel's only tsr_zero_of.
  EXPECT_EQ(src.find("tid", entry), at + std::string("const int ").size());
  EXPECT_EQ(occurrences(src.substr(entry), "tsr_zero_of("), 1u);
  EXPECT_FALSE(b.compiled.ptx.empty());
}

TEST(EmittedCode, StreamedPassesTakeTheLargestGroupThatDividesTheThreadsVectors) {
  // A 24576-wide f16 row streamed by 512 threads: 6 vectors a thread, which 4 do not divide; the
  // steps then take 2 vectors each (not 1), so that two loads are still in flight together.
  const ir::Function softmax = prepared(trace_kernel<Out<half>, In<half>>(
      "softmax_24576", {out_param("z", DType::F16, {1, 24576}), in_param("x", DType::F16, 2)},
      [](Out<half> z, In<half> x) {
        auto v = load_like(x, z).cast<float>();
        auto e = exp(v - max(v, 1));
        z.store((e / sum(e, 1)).cast<half>());
      }));
  const LayoutPlan p = plan(softmax);
  ASSERT_TRUE(p.stream_rows);
  ASSERT_EQ(p.threads, 512);
  const Built b = build(softmax, aligned_spec(softmax, kSm90a));
  const std::string& src = b.kernel.source;
  EXPECT_NE(src.find("for (int kv = 0; kv < 3; ++kv)"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int k = kv * 2; k < kv * 2 + 2; ++k)"), std::string::npos) << src;
  EXPECT_EQ(src.find("for (int k = kv; k < kv + 1; ++k)"), std::string::npos) << src;
  EXPECT_FALSE(b.compiled.ptx.empty());
}

// A LayerNorm over `cols` f16 columns with f32 weight and bias rows: three row-sized loads.
ir::Function layernorm(int64_t cols) {
  const float inv = 1.0f / static_cast<float>(cols);
  return prepared(trace_kernel<Out<half>, In<half>, In<float>, In<float>>(
      "layernorm_rows",
      {out_param("y", DType::F16, {1, cols}), in_param("x", DType::F16, 2),
       in_param("w", DType::F32, 2), in_param("b", DType::F32, 2)},
      [cols, inv](Out<half> y, In<half> x, In<float> w, In<float> b) {
        auto v = load_like(x, y).cast<float>();
        auto d = v - sum(v, 1) * inv;
        auto r = rsqrt(sum(d * d, 1) * inv + 1e-5f);
        y.store((d * r * load(w, {0, 0}, {1, cols}) + load(b, {0, 0}, {1, cols})).cast<half>());
      }));
}

TEST(LayoutPlan, RowWiseKernelsLoadingThreeRowsLoadThemFirstOnAPersistentGrid) {
  // A norm whose weight and bias rows are as large as its tile issues all three loads before it
  // reduces, on a grid of exactly the resident blocks, each looping over rows; its resident
  // threads follow the registers three rows take: 16 elements a thread (256 threads hold 4096
  // columns) -> 768, 32 (8192 columns) -> 512.
  struct Case {
    int64_t cols;
    int threads, blocks;
  };
  for (const Case c : {Case{4096, 256, 3}, Case{8192, 256, 2}, Case{2048, 128, 6}}) {
    SCOPED_TRACE(c.cols);
    const ir::Function norm = layernorm(c.cols);
    const LayoutPlan p = plan(norm);
    EXPECT_EQ(p.threads, c.threads);
    EXPECT_EQ(p.min_blocks, c.blocks);
    EXPECT_EQ(p.blocks_per_sm, c.blocks);
    EXPECT_TRUE(p.loads_first);
    const backend::cuda::EmittedKernel k = backend::cuda::emit(norm, aligned_spec(norm, kSm90a));
    EXPECT_EQ(k.blocks_per_sm, c.blocks);
    EXPECT_NE(k.source.find("__launch_bounds__(" + std::to_string(c.threads) + ", " +
                            std::to_string(c.blocks) + ")"),
              std::string::npos);
    // The weight and bias rows are loaded (whole tiles, no epilogue steps) before the first
    // reduction's shuffles.
    const size_t w = k.source.find("(const float*)p2_w.data");
    const size_t bias = k.source.find("(const float*)p3_b.data");
    const size_t shuffle = k.source.find("__shfl_xor_sync");
    ASSERT_NE(shuffle, std::string::npos) << k.source;
    EXPECT_LT(w, shuffle) << k.source;
    EXPECT_LT(bias, shuffle) << k.source;
    EXPECT_EQ(k.source.find("for (int kv = 0;"), std::string::npos) << k.source;
  }
  // 16384 columns: 256 threads would hold 64 elements each, so 512 hold 32, alone on their
  // multiprocessor (128 registers).
  const LayoutPlan wide = plan(layernorm(16384));
  EXPECT_EQ(wide.threads, 512);
  EXPECT_EQ(wide.min_blocks, 1);
  EXPECT_TRUE(wide.loads_first);
  EXPECT_FALSE(wide.stream_rows);
  // TESSERA_AB_ROWWISE_LOADS_FIRST=0 (an A/B switch) plans as before: 32 elements a thread, 768
  // resident, the weight and bias loaded in the epilogue a vector at a time.
  {
    ScopedEnv off("TESSERA_AB_ROWWISE_LOADS_FIRST", "0");
    const ir::Function norm = layernorm(4096);
    const LayoutPlan old = plan(norm);
    EXPECT_EQ(old.threads, 128);
    EXPECT_EQ(old.min_blocks, 6);
    EXPECT_EQ(old.blocks_per_sm, 6);
    EXPECT_FALSE(old.loads_first);
    const std::string src = backend::cuda::emit(norm, aligned_spec(norm, kSm90a)).source;
    EXPECT_NE(src.find("for (int kv = 0; kv < 4; ++kv)"), std::string::npos) << src;
    const size_t w = src.find("(const float*)p2_w.data");
    ASSERT_NE(w, std::string::npos) << src;
    EXPECT_GT(w, src.find("__shfl_xor_sync")) << src;
  }
  // A residual add's norms are not LayerNorm's shape and keep their plan: RMSNorm (the row, the
  // residual and the weight: three rows, one reduction) and LayerNorm (four rows).
  const ir::Function add_rms = prepared(trace_kernel<Out<half>, In<half>, In<half>, In<float>>(
      "add_rms_rows",
      {out_param("y", DType::F16, {1, 4096}), in_param("x", DType::F16, 2),
       in_param("r", DType::F16, 2), in_param("w", DType::F32, 2)},
      [](Out<half> y, In<half> x, In<half> r, In<float> w) {
        auto v = load_like(x, y).cast<float>() + load_like(r, y).cast<float>();
        y.store((v * rsqrt(sum(v * v, 1) * (1.0f / 4096) + 1e-5f) * load(w, {0, 0}, {1, 4096}))
                    .cast<half>());
      }));
  const LayoutPlan ar = plan(add_rms);
  EXPECT_FALSE(ar.loads_first);
  EXPECT_EQ(ar.threads, 128);
  EXPECT_EQ(ar.min_blocks, 6);
  const ir::Function add_ln =
      prepared(trace_kernel<Out<half>, In<half>, In<half>, In<float>, In<float>>(
          "add_layer_rows",
          {out_param("y", DType::F16, {1, 4096}), in_param("x", DType::F16, 2),
           in_param("r", DType::F16, 2), in_param("w", DType::F32, 2),
           in_param("b", DType::F32, 2)},
          [](Out<half> y, In<half> x, In<half> r, In<float> w, In<float> b) {
            auto v = load_like(x, y).cast<float>() + load_like(r, y).cast<float>();
            auto d = v - sum(v, 1) * (1.0f / 4096);
            auto s = rsqrt(sum(d * d, 1) * (1.0f / 4096) + 1e-5f);
            y.store((d * s * load(w, {0, 0}, {1, 4096}) + load(b, {0, 0}, {1, 4096})).cast<half>());
          }));
  const LayoutPlan al = plan(add_ln);
  EXPECT_FALSE(al.loads_first);
  EXPECT_EQ(al.threads, 128);
  EXPECT_EQ(al.min_blocks, 6);
  // RMSNorm (a row and a weight row) and softmax keep a block per row and no early loads.
  const LayoutPlan rms = plan(corpus_kernel("rmsnorm_f16"));
  EXPECT_FALSE(rms.loads_first);
  EXPECT_EQ(rms.blocks_per_sm, 0);
  const ir::Function softmax = corpus_kernel("softmax_f16");
  EXPECT_FALSE(plan(softmax).loads_first);
  const std::string src = backend::cuda::emit(softmax, aligned_spec(softmax, kSm90a)).source;
  EXPECT_EQ(src.find("for (int kv = 0;"), std::string::npos);
}

TEST(LayoutPlan, StreamedRowsLoadFourVectorsAStep) {
  // Rows too long for the threads' registers are streamed; each step's loads are issued
  // together, four vectors of each row-sized input: softmax's row, RMSNorm's row and weight.
  const ir::Function softmax = prepared(trace_kernel<Out<half>, In<half>>(
      "long_softmax", {out_param("z", DType::F16, {1, 65536}), in_param("x", DType::F16, 2)},
      [](Out<half> z, In<half> x) {
        auto v = load_like(x, z).cast<float>();
        auto e = exp(v - max(v, 1));
        z.store((e / sum(e, 1)).cast<half>());
      }));
  const ir::Function rmsnorm = prepared(trace_kernel<Out<half>, In<half>, In<float>>(
      "long_rmsnorm",
      {out_param("y", DType::F16, {1, 65536}), in_param("x", DType::F16, 2),
       in_param("w", DType::F32, 2)},
      [](Out<half> y, In<half> x, In<float> w) {
        auto v = load_like(x, y).cast<float>();
        auto r = rsqrt(sum(v * v, 1) * (1.0f / 65536) + 1e-6f);
        y.store((v * r * load(w, {0, 0}, {1, 65536})).cast<half>());
      }));
  const LayoutPlan s = plan(softmax), n = plan(rmsnorm);
  EXPECT_TRUE(s.stream_rows);
  EXPECT_EQ(s.stream_group, 4);
  EXPECT_TRUE(n.stream_rows);
  EXPECT_EQ(n.stream_group, 4);
  // A row held in registers is not streamed, and keeps one vector a step.
  const LayoutPlan held = plan(corpus_kernel("softmax_f16"));
  EXPECT_FALSE(held.stream_rows);
  EXPECT_EQ(held.stream_group, 1);
}

TEST(LayoutPlan, MmaTilingCoversTheAccumulatorWithTheBlocksWarps) {
  const backend::cuda::MmaTiling t = backend::cuda::mma_tiling({64, 64}, 128);
  EXPECT_EQ(t.warps_m * t.warps_n, 4);
  EXPECT_EQ(t.rows(), 64);
  EXPECT_EQ(t.cols(), 64);
  EXPECT_EQ(t.frags_m * 16, t.frags_n * 8);  // square per-warp tiles: 32x32
  const backend::cuda::MmaTiling r = backend::cuda::mma_tiling({40, 24}, 64);
  EXPECT_EQ(r.warps_m * r.warps_n, 2);
  EXPECT_GE(r.rows(), 40);
  EXPECT_GE(r.cols(), 24);
}

TEST(LayoutPlan, RejectsIrThatStillHasLocalVariables) {
  ir::Function f = trace_kernel<Out<float>, In<float>>(
      "traced", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
      [](Out<float> z, In<float> x) {
        auto acc = Tile<float>::zeros({8});
        for_range(0, 2, [&](Index) { acc = acc + load_like(x, z); });
        z.store(acc);
      });
  EXPECT_THROW(backend::cuda::plan_layouts(f, aligned_spec(f, kSm80)), InternalError);
}

TEST(LayoutPlan, RejectsASpecThatDoesNotDescribeEveryParameter) {
  const ir::Function f = corpus_kernel("add_f32");
  backend::cuda::KernelSpec spec = aligned_spec(f, kSm80);
  spec.tensors.pop_back();
  try {
    backend::cuda::plan_layouts(f, spec);
    FAIL() << "a short spec was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("describes 2 parameters, but the kernel has 3"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessera::test

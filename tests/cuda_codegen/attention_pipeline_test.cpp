// The attention lowering on sm_90a (attention_pipeline.hpp, codegen_attention.cpp): a flash-
// attention forward written as a user writes it is recognized by its loop's structure and lowered
// to TMA copies and wgmma with the softmax in the accumulators' registers; loops that do not fit
// (another architecture, unaligned rows, f32, a head dimension not a multiple of 64) take the
// general lowering. Compile-only: NVRTC checks the emitted code, the GPU tests its results.
#include <gtest/gtest.h>

#include <cmath>

#include <tessera/tessera.hpp>

#include "corpus.hpp"
#include "grid_dependency_check.hpp"
#include "tessera/backend/cuda/attention_pipeline.hpp"
#include "tessera/backend/cuda/layout.hpp"
#include "tessera/backend/cuda/lowered.hpp"
#include "tessera/backend/cuda/software_pipeline.hpp"
#include "tessera/core/error.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// The kernel library's flash-attention forward (kernels/src/flash_attention.cpp), traced with
// [B, L, H, D] tensors: BM queries of one (batch, head) against key tiles of BN.
// `if_mask`: as the kernel library writes it since session 9 — the scale applied inside exp's
// argument (a positive scale), and the mask under an if that only the key tiles holding a hidden
// key take. `prefetch_kv`: the kernel starts with prefetch(k) and prefetch(v).
template <Element T>
ir::Function flash(int64_t bm, int64_t bn, int64_t dim, bool causal, bool if_mask = false,
                   bool prefetch_kv = false) {
  const DType t = dtype_v<T>;
  return prepared(trace_kernel<Out<T>, In<T>, In<T>, In<T>, Scalar<float>>(
      "flash",
      {out_param("o", t, {1, bm, 1, dim}), in_param("q", t, 4), in_param("k", t, 4),
       in_param("v", t, 4), scalar_param("scale", DType::F32)},
      [=](Out<T> o, In<T> q, In<T> k, In<T> v, Scalar<float> scale) {
        if (prefetch_kv) {
          prefetch(k);
          prefetch(v);
        }
        numerics(Numerics::fast);
        const Index b = o.tile_index(0), i = o.tile_index(1), h = o.tile_index(2);
        const Index kv_head = h / (q.dim(2) / k.dim(2)).template cast<int32_t>();
        const Index q_len = q.dim(1).template cast<int32_t>();
        const Index k_len = k.dim(1).template cast<int32_t>();
        const Tile<T> qt = load(q, {b, i, h, 0}, {1, bm, 1, dim}).reshape({bm, dim});
        const Index q_pos = iota<int32_t>({bm, 1}, 0) + i * bm + (k_len - q_len);
        Index k_end = k_len;
        if (causal) k_end = minimum(k_len, (i + 1) * bm + (k_len - q_len));
        Tile<float> m = Tile<float>::full({bm, 1}, -INFINITY);
        Tile<float> l = Tile<float>::zeros({bm, 1});
        Tile<float> acc = Tile<float>::zeros({bm, dim});
        for_range(0, (k_end + (bn - 1)) / bn, [&](Index j) {
          const Tile<T> kt = load(k, {b, j, kv_head, 0}, {1, bn, 1, dim}).reshape({bn, dim});
          const Tile<T> vt = load(v, {b, j, kv_head, 0}, {1, bn, 1, dim}).reshape({bn, dim});
          if (if_mask) {
            Tile<float> s = mma(qt, transpose(kt), Tile<float>::zeros({bm, bn}));
            Tile<bool> masked = (j + 1) * bn > k_len;
            if (causal) masked = masked | ((j + 1) * bn - 1 > i * bm + (k_len - q_len));
            if_(masked, [&] {
              const Index key = iota<int32_t>({1, bn}, 1) + j * bn;
              Tile<bool> visible = key < k_len;
              if (causal) visible = visible & (key <= q_pos);
              s = select(visible, s, -INFINITY);
            });
            const Tile<float> m_new = maximum(m, max(s, 1) * scale);
            const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
            const Tile<float> alpha = exp(m - shift);
            const Tile<float> p = exp(s * scale - shift);
            l = l * alpha + sum(p, 1);
            acc = acc * alpha + mma(p.template cast<T>(), vt, Tile<float>::zeros({bm, dim}));
            m = m_new;
            return;
          }
          const Index key = iota<int32_t>({1, bn}, 1) + j * bn;
          Tile<bool> visible = key < k_len;
          if (causal) visible = visible & (key <= q_pos);
          const Tile<float> s = select(
              visible, mma(qt, transpose(kt), Tile<float>::zeros({bm, bn})) * scale, -INFINITY);
          const Tile<float> m_new = maximum(m, max(s, 1));
          const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
          const Tile<float> alpha = exp(m - shift);
          const Tile<float> p = exp(s - shift);
          l = l * alpha + sum(p, 1);
          acc = acc * alpha + mma(p.template cast<T>(), vt, Tile<float>::zeros({bm, dim}));
          m = m_new;
        });
        o.store((acc / l).template cast<T>().reshape({1, bm, 1, dim}));
      }));
}

TEST(AttentionPipeline, FlashForwardIsLoweredWithTmaAndWgmmaOnSm90a) {
  for (const bool causal : {false, true}) {
    for (const ir::Function& f :
         {flash<half>(128, 128, 128, causal), flash<bfloat16>(128, 128, 64, causal),
          flash<half>(64, 64, 128, causal)}) {
      const std::string what = f.params[0].dtype == DType::F16 ? "f16" : "bf16";
      ASSERT_TRUE(backend::cuda::find_attention_pipeline(f, aligned_spec(f, kSm90a))) << what;
      const Built b = build(f, aligned_spec(f, kSm90a));
      const std::string src = kernel_part(b.kernel.source);
      EXPECT_TRUE(has(src, "An attention loop")) << src;
      // S = Q K^T from shared memory, O += P V with P in registers: both on wgmma.
      EXPECT_TRUE(has(b.compiled.ptx, "wgmma.mma_async.sync.aligned.m64n")) << what;
      EXPECT_TRUE(has(b.compiled.ptx, "cp.async.bulk.tensor.4d")) << what;
      EXPECT_TRUE(has(b.compiled.ptx, "mbarrier.try_wait.parity")) << what;
      EXPECT_FALSE(has(b.compiled.ptx, "mma.sync")) << what;
      // The softmax's row reductions are quad shuffles on the fragments: no shared memory, no
      // barrier between the consumers in the loop but the ping-pong of two warpgroups' turns at
      // the tensor cores (named barriers 2 and 3).
      EXPECT_TRUE(has(src, "__shfl_xor_sync(0xffffffffu, t, 2)")) << src;
      EXPECT_FALSE(has(src, "tsr_bar_sync(1")) << src;
      const bool two = f.params[0].tile_shape[1] == 128;
      EXPECT_EQ(has(src, "tsr_bar_sync(2 + tsr_wg, 256)"), two) << src;
      EXPECT_EQ(has(src, "tsr_attn_bar_arrive(3 - tsr_wg, 256)"), two) << src;
      // Software-pipelined: S of the next key tile is issued with P V of this one, and P V
      // accumulates onto the rescaled output (even where the body computes it after the mma).
      EXPECT_TRUE(has(src, "software-pipelined")) << src;
      EXPECT_TRUE(has(src, "_zero(")) << src;
      EXPECT_TRUE(has(src, "tsr_attn_exp_sub(")) << src;
      EXPECT_FALSE(has(src, "-> distributed")) << src;
      EXPECT_EQ(b.kernel.tensor_maps.size(), 3u);  // Q, K, V
      EXPECT_EQ(b.kernel.blocks_per_sm, 1);
      EXPECT_EQ(b.kernel.threads, static_cast<int>(f.params[0].tile_shape[1]) * 2 + 128);
    }
  }
}

// The software pipeline over the lowered form (software_pipeline.hpp) on the attention loop: K and
// V become copies into the ring one stage ahead of their readers, Q one copy before the loop; the
// emitted kernel's ring is the one its lowered form holds (TESSERA_DUMP=layouts).
// Programmatic dependent launch: the attention kernel waits for the grids before it on the stream
// after its barrier setup and before its first TMA copy or store (grid_dependency_check.hpp).
TEST(AttentionPipeline, WaitsForTheGridsBeforeItBeforeItsFirstGlobalAccess) {
  const ir::Function f = flash<half>(128, 128, 128, /*causal=*/true);
  const Built b = build(f, aligned_spec(f, kSm90a));
  ASSERT_NE(b.kernel.source.find("An attention loop"), std::string::npos);
  EXPECT_TRUE(b.kernel.waits_for_prior_grids);
  EXPECT_EQ(grid_dependency_violation(b.compiled.ptx, b.kernel.entry), "")
      << before_wait(b.compiled.ptx, b.kernel.entry);
}

// The prefetch op in an attention kernel: still the attention lowering, the slices issued by
// thread 0 before the wait (the bulk L2 prefetch is the only memory instruction there).
TEST(AttentionPipeline, PrefetchesBeforeTheWait) {
  const ir::Function f = flash<half>(128, 128, 128, /*causal=*/true, false, /*prefetch_kv=*/true);
  const Built b = build(f, aligned_spec(f, kSm90a));
  const std::string src = kernel_part(b.kernel.source);
  ASSERT_NE(src.find("An attention loop"), std::string::npos);
  const size_t k = src.find("tsr_prefetch_l2_share(p2_k, 2, 33554432LL);");
  const size_t v = src.find("tsr_prefetch_l2_share(p3_v, 2, 33554432LL);");
  ASSERT_NE(k, std::string::npos) << src;
  ASSERT_NE(v, std::string::npos) << src;
  EXPECT_LT(v, src.find("tsr_wait_prior_grids();"));
  EXPECT_LT(b.compiled.ptx.find("cp.async.bulk.prefetch.L2.global"),
            b.compiled.ptx.find("griddepcontrol.wait"));
  EXPECT_EQ(grid_dependency_violation(b.compiled.ptx, b.kernel.entry), "")
      << before_wait(b.compiled.ptx, b.kernel.entry);
}

TEST(AttentionPipeline, TheSoftwarePipelineMakesKAndVRingCopiesAndQOneCopy) {
  using namespace backend::cuda;
  for (const bool if_mask : {false, true}) {
    const ir::Function f = flash<half>(128, 128, 128, true, if_mask);
    const KernelSpec spec = aligned_spec(f, kSm90a);
    const std::optional<AttentionPipeline> a = find_attention_pipeline(f, spec);
    ASSERT_TRUE(a);
    const LayoutPlan plan = plan_layouts(f, spec, true, /*pipeline=*/false);
    LoweredFunction lf = software_pipeline(lower_layouts(f, plan), attention_ring(f, *a, 2));
    EXPECT_NO_THROW(verify_lowered(lf)) << print_lowered(lf);
    // Q: copied where it was loaded, waited on once before the loop; its reshape reads the copy.
    const PipelinedLoop& ring = *lf.pipeline;
    ASSERT_EQ(ring.buffers.size(), 3u);
    EXPECT_TRUE(ring.buffers[2].once);
    EXPECT_GE(ring.buffers[2].views.size(), 2u);  // the load and its reshape to [BM, D]
    EXPECT_EQ(ring.buffers[1].offset, a->kv_bytes());
    const std::string text = print_lowered(lf);
    EXPECT_TRUE(has(text, "pipeline: 2 stages of " + std::to_string(a->stage_bytes()))) << text;
    EXPECT_TRUE(has(text, " = async_copy -> ring[2]\n")) << text;
    EXPECT_TRUE(has(text, "barrier_wait full ring[2]\n")) << text;
    for (const char* line :
         {" = async_copy -> ring[0] slot 0 (iteration 0)\n", " = async_copy -> ring[1] slot it+1\n",
          "barrier_wait empty ring[0] slot it+1\n", "barrier_wait full ring[1] slot it+0\n",
          "barrier_arrive empty ring[1] slot it+0\n"})
      EXPECT_TRUE(has(text, line)) << line << "\n" << text;
    // K's slot is released after the scores' mma, V's after P V's: a reader of V after its
    // arrive is rejected.
    for (LoweredOp& l : lf.body.ops) {
      if (l.op != a->loop) continue;
      std::vector<LoweredOp>& body = l.regions[0].ops;
      size_t arrive_v = 0, pv = 0;
      for (size_t i = 0; i < body.size(); ++i) {
        if (body[i].kind == LoweredKind::BarrierArrive && body[i].buffer == 1) arrive_v = i;
        if (body[i].op == a->pv_mma) pv = i;
      }
      ASSERT_GT(arrive_v, pv);
      LoweredOp arrive = std::move(body[arrive_v]);
      body.erase(body.begin() + static_cast<std::ptrdiff_t>(arrive_v));
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(pv), std::move(arrive));
    }
    try {
      verify_lowered(lf);
      ADD_FAILURE() << "accepted a read of V after its slot was released";
    } catch (const InternalError& e) {
      EXPECT_TRUE(has(e.what(), "after barrier_arrive empty released its slot")) << e.what();
    }
    const EmittedKernel k = emit(f, spec);
    ASSERT_TRUE(has(k.source, "An attention loop"));
    EXPECT_TRUE(has(k.layouts, "pipeline: ")) << k.layouts;
    EXPECT_TRUE(has(k.layouts, "async_copy -> ring[1] slot it+")) << k.layouts;
  }
}

// The kernel library's form: an if in the loop body (the mask on some key tiles only) is held in
// registers with a uniform branch, and exp(s * scale - shift) is one FFMA before ex2.
TEST(AttentionPipeline, AMaskUnderAnIfAndAScaleInsideExpAreLoweredInRegisters) {
  for (const bool causal : {false, true}) {
    for (const ir::Function& f :
         {flash<half>(128, 128, 128, causal, true), flash<bfloat16>(128, 128, 64, causal, true),
          flash<half>(64, 64, 128, causal, true)}) {
      ASSERT_TRUE(backend::cuda::find_attention_pipeline(f, aligned_spec(f, kSm90a)));
      const Built b = build(f, aligned_spec(f, kSm90a));
      const std::string src = kernel_part(b.kernel.source);
      EXPECT_TRUE(has(src, "An attention loop")) << src;
      EXPECT_TRUE(has(src, "software-pipelined")) << src;
      EXPECT_TRUE(has(src, "tsr_attn_exp_scaled_sub(v")) << src;
      EXPECT_TRUE(has(b.compiled.ptx, "wgmma.mma_async.sync.aligned.m64n"));
      EXPECT_FALSE(has(b.compiled.ptx, "mma.sync"));
    }
  }
}

// Q is read by the scores' mma alone: each consumer warp hands it back to the producer once the
// tile's last S is done (in the prologue when there is one key tile, else in the trip before the
// last; after the loop only when there is none), so the next tile's Q is copied under this one's
// last P V and store. The output tile is stored a register pair (two columns) per 32-bit store,
// converted to 16 bits there.
TEST(AttentionPipeline, QIsHandedBackAfterTheLastScoresAndTheOutputIsStoredInPairs) {
  for (const ir::Function& f :
       {flash<half>(128, 128, 128, true, true), flash<bfloat16>(128, 128, 64, false, true)}) {
    const Built b = build(f, aligned_spec(f, kSm90a));
    const std::string src = kernel_part(b.kernel.source);
    ASSERT_TRUE(has(src, "software-pipelined")) << src;
    const size_t prologue = src.find("the last S is done: Q is read");
    const size_t trip = src.find("the last tile's S is done: Q is read");
    const size_t none = src.find("no key tile: Q is not read");
    ASSERT_NE(prologue, std::string::npos) << src;
    ASSERT_NE(trip, std::string::npos) << src;
    ASSERT_NE(none, std::string::npos) << src;
    EXPECT_LT(prologue, trip);
    EXPECT_LT(trip, none);
    // Three arrivals, each under its own condition: one per tile and warp.
    size_t arrivals = 0;
    for (size_t at = src.find("tsr_mbar_arrive(&tsr_qempty)"); at != std::string::npos;
         at = src.find("tsr_mbar_arrive(&tsr_qempty)", at + 1))
      ++arrivals;
    EXPECT_EQ(arrivals, 3u) << src;
    EXPECT_FALSE(has(src, "if (lane == 0) tsr_mbar_arrive(&tsr_qempty)")) << src;
    const std::string pack =
        f.params[0].dtype == DType::F16 ? "tsr_pack_f16x2(" : "tsr_pack_bf16x2(";
    EXPECT_TRUE(has(src, "*reinterpret_cast<unsigned*>(tsr_at + c) = " + pack)) << src;
    // The output's cast to 16 bits is that conversion (no round trip through 16 bits before it).
    EXPECT_FALSE(has(src, "] = tsr_round_f16(") || has(src, "] = tsr_round_bf16(")) << src;
    EXPECT_TRUE(has(b.compiled.ptx, "st.global.u32") || has(b.compiled.ptx, "st.global.b32"))
        << b.compiled.ptx;
  }
}

TEST(AttentionPipeline, TheTensorMapsBoxOneRowTileOfEachOperand) {
  const ir::Function f = flash<half>(128, 64, 128, true);
  const Built b = build(f, aligned_spec(f, kSm90a));
  ASSERT_EQ(b.kernel.tensor_maps.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const backend::cuda::TensorMapSpec& m = b.kernel.tensor_maps[static_cast<size_t>(i)];
    EXPECT_EQ(m.param, i + 1);  // q, k, v
    EXPECT_EQ(m.box_inner, 64);
    EXPECT_EQ(m.box_outer, i == 0 ? 128 : 64);
    EXPECT_EQ(m.outer_axis, 1);  // L of [B, L, H, D]
    EXPECT_EQ(m.swizzle_bytes, 128);
  }
}

TEST(AttentionPipeline, LoopsThatDoNotFitTakeTheGeneralLowering) {
  const ir::Function f16 = flash<half>(128, 128, 128, true);
  // Another architecture, and rows TMA cannot address.
  EXPECT_FALSE(backend::cuda::find_attention_pipeline(f16, aligned_spec(f16, kSm80)));
  EXPECT_FALSE(backend::cuda::find_attention_pipeline(f16, unaligned_spec(f16, kSm90a)));
  const Built general = build(f16, unaligned_spec(f16, kSm90a));
  EXPECT_FALSE(has(general.compiled.ptx, "wgmma")) << kernel_part(general.kernel.source);
  EXPECT_TRUE(has(general.compiled.ptx, "mma.sync"));
  // f32 has no tensor-core path; a head dimension of 96 is not a whole number of TMA strips.
  const ir::Function f32 = flash<float>(64, 64, 64, false);
  EXPECT_FALSE(backend::cuda::find_attention_pipeline(f32, aligned_spec(f32, kSm90a)));
  const ir::Function d96 = flash<half>(64, 64, 96, false);
  EXPECT_FALSE(backend::cuda::find_attention_pipeline(d96, aligned_spec(d96, kSm90a)));
  EXPECT_FALSE(has(build(d96, aligned_spec(d96, kSm90a)).compiled.ptx, "wgmma"));
  // A GEMM loop is not an attention loop.
  const ir::Function gemm = corpus_kernel("gemm_f16_128x256x64");
  EXPECT_FALSE(backend::cuda::find_attention_pipeline(gemm, aligned_spec(gemm, kSm90a)));
}

}  // namespace
}  // namespace tessera::test

// The GPU lowering of accumulate: one atomic add per element (red/atom.global.add in the PTX for
// sm_80 and sm_90a), each element added by one thread only, no barrier around the adds, and the
// pipelined GEMM lowering kept for a split-K loop whose result is added.
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "corpus.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(AccumulateCodegen, AddsAreAtomicInThePtxForEachArchitecture) {
  const ir::Function f = corpus_kernel("accumulates");
  for (const backend::cuda::Arch arch : {kSm80, kSm90a}) {
    const Built b = build(f, aligned_spec(f, arch));
    // f32 adds whose result is unused become red.global.add.f32 (or atom.global.add.f32).
    EXPECT_TRUE(has(b.compiled.ptx, "red.global.add.f32") ||
                has(b.compiled.ptx, "atom.global.add.f32"))
        << arch.str() << "\n"
        << kernel_part(b.kernel.source);
    EXPECT_TRUE(
        has(b.compiled.ptx, "red.global.add.u32") || has(b.compiled.ptx, "red.global.add.s32") ||
        has(b.compiled.ptx, "atom.global.add.u32") || has(b.compiled.ptx, "atom.global.add.s32"))
        << arch.str();
    EXPECT_FALSE(has(b.compiled.ptx, "st.global.f32")) << arch.str() << ": a plain store";
  }
}

TEST(AccumulateCodegen, AUniformTileIsAddedOncePerElementNotOncePerThread) {
  // Every thread holds every element of a uniform tile (a constant): the adds walk the
  // distributed layout instead, so each of the 8 elements is added by one thread only.
  const ir::Function f = prepared(trace_kernel<Accum<float>>(
      "count_blocks", {{"h", ir::ParamKind::Accum, DType::F32, 1, {}, 1}},
      [](Accum<float> h) { h.add_at(Tile<float>::full({8}, 1.0f), {0}); }));
  const std::string src = kernel_part(build(f, aligned_spec(f, kSm90a)).kernel.source);
  EXPECT_TRUE(has(src, "tid")) << src;
  EXPECT_TRUE(has(src, "if (f < 8 && o0 + i0 >= 0")) << src;
  EXPECT_FALSE(has(src, "__syncthreads();  // an earlier store")) << src;
}

// Split-K as bench/gemm.cpp writes it: a grid of rank 2 whose first axis holds (split, M tile),
// each block a contiguous K range. The loop is still the one the pipelined lowering recognizes
// (TMA + wgmma on sm_90a, cp.async + mma.sync on sm_80), and the epilogue's add goes straight
// from the accumulator fragments to atomic adds.
ir::Function split_k_gemm() {
  return prepared(trace_kernel<Accum<float>, In<half>, In<half>, Scalar<int32_t>>(
      "split_k_gemm",
      {{"c", ir::ParamKind::Accum, DType::F32, 2, {}, 2},
       in_param("a", DType::F16, 2),
       in_param("b", DType::F16, 2),
       scalar_param("k_per_split", DType::I32)},
      [](Accum<float> c, In<half> a, In<half> b, Scalar<int32_t> k_per_split) {
        const Index tiles_m = ((a.dim(0) + 127) / 128).cast<int32_t>();
        const Index i = tile_index(0) % tiles_m, s = tile_index(0) / tiles_m, j = tile_index(1);
        const Index k_tiles = ((a.dim(1) + 63) / 64).cast<int32_t>();
        const Index k0 = s * k_per_split;
        Tile<float> acc = Tile<float>::zeros({128, 256});
        for_range(k0, minimum(k0 + k_per_split, k_tiles), [&](Index k) {
          acc = mma(load(a, {i, k}, {128, 64}), load(b, {k, j}, {64, 256}), acc);
        });
        c.add(acc, {i, j});
      }));
}

TEST(AccumulateCodegen, SplitKGemmTakesThePipelinedLoweringWithAtomicAdds) {
  const ir::Function f = split_k_gemm();
  const Built hopper = build(f, aligned_spec(f, kSm90a));
  EXPECT_TRUE(has(hopper.compiled.ptx, "wgmma.mma_async")) << kernel_part(hopper.kernel.source);
  EXPECT_TRUE(has(hopper.compiled.ptx, "cp.async.bulk.tensor"));
  EXPECT_TRUE(has(hopper.compiled.ptx, "red.global.add.f32") ||
              has(hopper.compiled.ptx, "atom.global.add.f32"));
  const Built ampere = build(f, aligned_spec(f, kSm80));
  EXPECT_TRUE(has(ampere.compiled.ptx, "cp.async.cg.shared.global"))
      << kernel_part(ampere.kernel.source);
  EXPECT_TRUE(has(ampere.compiled.ptx, "red.global.add.f32") ||
              has(ampere.compiled.ptx, "atom.global.add.f32"));
}

}  // namespace
}  // namespace tessera::test

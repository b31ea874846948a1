// The GPU lowering of accumulate: one atomic add per element (red/atom.global.add in the PTX for
// sm_80 and sm_90a), each element added by one thread only (a replicated register adds where it
// is the owner), and no barrier around the adds.
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "corpus.hpp"

namespace tessera::test {
namespace {

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

TEST(AccumulateCodegen, AReplicatedRegisterAddsOnlyWhereItIsTheOwner) {
  // The histogram's counts come from a reduction along axis 0: a slice layout, in which several
  // threads hold one count. Only the owner adds it, or the count would be added several times.
  const ir::Function f = corpus_kernel("accumulates");
  const std::string src = kernel_part(build(f, aligned_spec(f, kSm90a)).kernel.source);
  const size_t hist = src.find("p1_hist");
  ASSERT_NE(hist, std::string::npos) << src;
  EXPECT_TRUE(has(src.substr(hist), "pf %")) << src;
  EXPECT_FALSE(has(src, "__syncthreads();  // an earlier store")) << src;
}

}  // namespace
}  // namespace tessera::test

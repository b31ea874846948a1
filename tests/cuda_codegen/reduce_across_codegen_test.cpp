// Reductions along a non-last axis (and along last axes the shuffle path does not take) are split
// among the block's threads: no thread walks a whole line of the reduced axis, and the partials
// meet in a tree of shuffles and one shared-memory pass. Each kernel is compiled by NVRTC for
// sm_80 and sm_90a (build() fails the test when it does not compile).
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "corpus.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

// z = reduce(x tile of `in`, axis), for one kind of reduction, f32.
enum class Kind { Sum, Max, Any };
ir::Function reduce_kernel(const Shape& in, int axis, Kind kind) {
  Shape out = in;
  out[static_cast<size_t>(axis)] = 1;
  const int rank = static_cast<int>(in.size());
  ir::Function f = trace_kernel<Out<float>, In<float>>(
      "reduce_across", {out_param("z", DType::F32, out), in_param("x", DType::F32, rank)},
      [&](Out<float> z, In<float> x) {
        auto t = in.size() == 2 ? load(x, {z.tile_index(0), 0}, in)
                                : load(x, {z.tile_index(0), 0, 0}, in);
        if (kind == Kind::Sum)
          z.store(sum(t, axis));
        else if (kind == Kind::Max)
          z.store(max(t, axis));
        else
          z.store(any(t > 0.0f, axis).cast<float>());
      });
  analysis::promote_locals(f);
  return f;
}

struct Emitted {
  std::string source;  // the kernel's part of the emitted source
  int64_t smem = 0;    // dynamic shared memory bytes
};
Emitted emitted(const Shape& in, int axis, Kind kind, backend::cuda::Arch arch = kSm90a) {
  const ir::Function f = reduce_kernel(in, axis, kind);
  const Built b = build(f, aligned_spec(f, arch));
  return {kernel_part(b.kernel.source), static_cast<int64_t>(b.kernel.shared_bytes)};
}

TEST(ReduceAcrossCodegen, ColumnSumsKeepTheTileInRegistersAndSplitTheRows) {
  // [256, 128] along axis 0: 512 threads of 4 columns each, so 16 threads a column group, each
  // summing 16 rows of its own registers; the 16 partials meet through shared memory. Before,
  // the tile (128 KiB) was staged and one thread a column summed 256 rows.
  for (const backend::cuda::Arch arch : {kSm80, kSm90a}) {
    const Emitted e = emitted({256, 128}, 0, Kind::Sum, arch);
    EXPECT_TRUE(has(e.source, "16 partials a result")) << e.source;
    EXPECT_FALSE(has(e.source, "j < 256")) << e.source;
    EXPECT_FALSE(has(e.source, "s[b + j * 128]")) << e.source;
    EXPECT_TRUE(has(e.source, "m < 16; ++m")) << e.source;
    EXPECT_LE(e.smem, 16 * 128 * 4) << "only the partials go through shared memory";
  }
  const Emitted small = emitted({32, 128}, 0, Kind::Sum);
  EXPECT_TRUE(has(small.source, "4 partials a result")) << small.source;
  EXPECT_FALSE(has(small.source, "j < 32")) << small.source;
  EXPECT_LE(small.smem, 4 * 128 * 4);
}

TEST(ReduceAcrossCodegen, NarrowColumnGroupsCombineByShufflesWithinAWarp) {
  // [4, 8, 16] along axis 1 (32 threads, 4 columns each): the 8 rows of each column group are
  // held by lanes 4 apart, so the tree is three shuffles down, then one pass to the owners.
  const ir::Function f = reduce_kernel({4, 8, 16}, 1, Kind::Max);
  const Built b = build(f, aligned_spec(f, kSm90a));
  EXPECT_TRUE(has(b.kernel.source, "8 partials a result")) << kernel_part(b.kernel.source);
  EXPECT_TRUE(has(b.compiled.ptx, "shfl.sync.down")) << b.compiled.ptx;
  EXPECT_FALSE(has(b.kernel.source, "j < 8")) << kernel_part(b.kernel.source);
}

TEST(ReduceAcrossCodegen, LinesThatDoNotFitTheRegistersSplitTheStagedTile) {
  // Rows of 24 (not a power of two of vectors) and a [20, 12] column sum (12 columns do not
  // divide the threads' vectors): staged in shared memory, then several threads a result, each
  // over a segment, and a tree.
  for (const auto& [shape, axis] : {std::pair<Shape, int>{{4, 24}, 1}, {{20, 12}, 0}}) {
    const int64_t extent = shape[static_cast<size_t>(axis)];
    const Emitted e = emitted(shape, axis, Kind::Sum);
    EXPECT_TRUE(has(e.source, "partials a result: thread p * ")) << e.source;
    EXPECT_TRUE(has(e.source, "to = (seg + 1) * " + std::to_string(extent) + " / ")) << e.source;
    EXPECT_FALSE(has(e.source, "j < " + std::to_string(extent))) << e.source;
    const Emitted any = emitted(shape, axis, Kind::Any);
    EXPECT_TRUE(has(any.source, "partials a result")) << any.source;
  }
  // Lines shorter than 16: the owner of each result walks it (a split would cost what it saves).
  const Emitted short_rows = emitted({4, 6}, 1, Kind::Sum);
  EXPECT_FALSE(has(short_rows.source, "partials a result")) << short_rows.source;
  EXPECT_TRUE(has(short_rows.source, "j < 6")) << short_rows.source;
}

TEST(ReduceAcrossCodegen, ColumnsAsWideAsTheThreadsVectorsAreReducedInRegistersAlone) {
  // [8, 1024] along axis 0: 256 threads of 4 columns hold whole columns, so each reduces its own
  // registers; nothing is staged and nothing is exchanged.
  const Emitted e = emitted({8, 1024}, 0, Kind::Sum);
  EXPECT_TRUE(has(e.source, "thread c reduces every row of column group c")) << e.source;
  EXPECT_FALSE(has(e.source, "j < 8")) << e.source;
  EXPECT_EQ(e.smem, 0) << e.source;
}

TEST(ReduceAcrossCodegen, ManyResultsPerThreadKeepOneLineEach) {
  // [4, 1024] along axis 0: 1024 results for 128 threads, so every thread already has eight
  // results of its own; each walks its 4-element line, with no partials.
  const Emitted e = emitted({4, 1024}, 0, Kind::Sum);
  EXPECT_FALSE(has(e.source, "partials a result")) << e.source;
  EXPECT_TRUE(has(e.source, "j < 4")) << e.source;
}

}  // namespace
}  // namespace tessera::test

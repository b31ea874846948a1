// The IR of a kernel with an Accum parameter: its text (what TESSERA_DUMP=ir shows: the parameter
// as `accum`, each add as `accumulate $h at [...]`, the grid's rank from the Accum's launch), and
// the bytes a later process reads back from the IR cache (the parameter kind, its grid rank).
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "tessera/analysis/canonical_order.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/serialize.hpp"
#include "tessera/ir/verifier.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

ir::Function fold() {
  ir::Function f = trace_kernel<Accum<float, 2>, In<float, 2>>(
      "fold",
      {{"h", ir::ParamKind::Accum, DType::F32, 2, {}, 3}, in_param("x", DType::F32, 2)},
      [](Accum<float, 2> h, In<float, 2> x) {
        auto t = load(x, {tile_index(0), tile_index(2)}, {4, 8});
        h.add(t, {tile_index(0), tile_index(1)});
      });
  analysis::promote_locals(f);
  analysis::canonical_order(f);
  return f;
}

TEST(AccumulateIr, PrintsTheParameterAndEachAdd) {
  const ir::Function f = fold();
  ASSERT_FALSE(ir::verify(f).has_value());
  EXPECT_EQ(ir::print(f),
            R"(kernel @fold($h: accum f32 rank 2, $x: in f32 rank 2) grid rank 3 {
  %0 = tile_index 0 : i32
  %1 = tile_index 2 : i32
  %2 = load $x[%0, %1] pad 0 : f32[4, 8]
  %3 = tile_index 0 : i32
  %4 = constant 4 : i32
  %5 = mul %3, %4 : i32
  %6 = tile_index 1 : i32
  %7 = constant 8 : i32
  %8 = mul %6, %7 : i32
  accumulate $h at [%5, %8], %2
}
)");
}

TEST(AccumulateIr, SurvivesTheIrCachesRoundTrip) {
  const ir::Function f = fold();
  const std::string bytes = ir::serialize(f);
  const std::optional<ir::Function> back = ir::deserialize(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(ir::print(*back), ir::print(f));
  EXPECT_EQ(back->params.at(0).kind, ir::ParamKind::Accum);
  EXPECT_EQ(back->params.at(0).grid_rank, 3);
  EXPECT_EQ(back->grid_rank, 3);
  EXPECT_EQ(ir::serialize(*back), bytes);
}

}  // namespace
}  // namespace tessera::test

#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"

using namespace tessera;
using namespace tessera::tile;

namespace {

ir::Function trace_gemm() {
  std::vector<ir::Param> params{{"c", ir::ParamKind::Out, DType::F32, 2, {64, 64}},
                                {"a", ir::ParamKind::In, DType::F16, 2, {}},
                                {"b", ir::ParamKind::In, DType::F16, 2, {}}};
  return tile::detail::trace("gemm", params, {}, [] {
    Out<float> c(tile::detail::ParamTag{0});
    In<half> a(tile::detail::ParamTag{1});
    In<half> b(tile::detail::ParamTag{2});
    auto acc = Tile<float>::zeros({64, 64});
    for_range(0, 4, [&](Index k) {
      acc = mma(load(a, {c.tile_index(0), k}, {64, 32}), load(b, {k, c.tile_index(1)}, {32, 64}),
                acc);
    });
    c.store(acc);
  });
}

TEST(Printer, GemmTracesToOneLoopCarriedAccumulator) {
  ir::Function f = trace_gemm();
  analysis::promote_locals(f);
  ASSERT_FALSE(ir::verify(f).has_value()) << ir::verify(f)->message;
  const std::string text = ir::print(f);
  EXPECT_NE(text.find("carry(%"), std::string::npos) << text;
  // exactly one carried value
  EXPECT_EQ(text.find("carry(%", text.find("carry(%") + 1), std::string::npos) << text;
  EXPECT_EQ(text.find("local_"), std::string::npos) << text;
}

}  // namespace

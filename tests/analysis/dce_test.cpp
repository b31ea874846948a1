// dce: dead pure ops go, effects (stores, prints) and everything they need stay.
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "analysis/ir_query.hpp"
#include "tessera/analysis/dce.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/verifier.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
using ir::OpKind;

template <class F>
ir::Function traced_then_dce(F&& body) {
  ir::Function f = trace_kernel<Out<float>, In<float>, In<float>>(
      "k",
      {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1), in_param("y", DType::F32, 1)},
      std::forward<F>(body));
  analysis::promote_locals(f);
  analysis::dce(f);
  if (auto d = ir::verify(f)) ADD_FAILURE() << "invalid after dce: " << d->message;
  return f;
}

int loads_from(const ir::Function& f, int param) {
  int n = 0;
  ir::walk(f.body,
           [&](const ir::Op& op) { n += op.kind == OpKind::Load && op.attrs.param == param; });
  return n;
}

TEST(Dce, RemovesDeadPureOpsAndWhatOnlyTheyUsed) {
  const ir::Function f = traced_then_dce([](Out<float> z, In<float> x, In<float> y) {
    [[maybe_unused]] auto unused = exp(load_like(x, z) * 2.0f);  // dead: never stored
    z.store(load_like(y, z));
  });
  EXPECT_EQ(count(f.body, OpKind::Exp), 0);
  EXPECT_EQ(count(f.body, OpKind::Mul), 0);
  EXPECT_EQ(count(f.body, OpKind::Constant), 0);
  EXPECT_EQ(loads_from(f, 1), 0);  // x fed only the dead ops
  EXPECT_EQ(loads_from(f, 2), 1);
  EXPECT_EQ(count(f.body, OpKind::TileIndex), 1);  // the one y's load needs
  EXPECT_EQ(count(f.body, OpKind::Store), 1);
}

// An unpadded load's bounds check is the only thing that reports its tile reaching outside the
// tensor, so the load stays even when nothing uses its tile; a padded one has no check and goes.
TEST(Dce, KeepsAnUnusedUnpaddedLoadAndRemovesAnUnusedPaddedOne) {
  const ir::Function f = traced_then_dce([](Out<float> z, In<float> x, In<float> y) {
    (void)load(x, {z.tile_index(0) + 1}, {8}, Pad::none());
    (void)load(y, {z.tile_index(0) + 1}, {8});
    z.store(Tile<float>::zeros({8}));
  });
  EXPECT_EQ(loads_from(f, 1), 1);
  EXPECT_EQ(loads_from(f, 2), 0);
}

TEST(Dce, KeepsStoresPrintsAndTheirOperands) {
  const ir::Function f = traced_then_dce([](Out<float> z, In<float> x, In<float>) {
    print("block {}", z.tile_index(0));
    z.store(load_like(x, z) + 1.0f);
  });
  EXPECT_EQ(count(f.body, OpKind::Print), 1);
  EXPECT_EQ(count(f.body, OpKind::Store), 1);
  EXPECT_EQ(count(f.body, OpKind::Add), 1);
  EXPECT_EQ(loads_from(f, 1), 1);
  EXPECT_EQ(count(f.body, OpKind::TileIndex), 2);  // one printed, one indexing the load
}

TEST(Dce, RemovesALoopWhoseResultIsUnusedAndWhoseBodyHasNoEffect) {
  const ir::Function f = traced_then_dce([](Out<float> z, In<float> x, In<float> y) {
    auto acc = Tile<float>::zeros({8});
    for_range(0, 4, [&](Index k) { acc = acc + load(x, {k}, {8}); });
    z.store(load_like(y, z));
  });
  EXPECT_EQ(count(f.body, OpKind::For), 0);
  EXPECT_EQ(loads_from(f, 1), 0);
}

TEST(Dce, KeepsALoopThatPrintsAndDropsDeadOpsInsideIt) {
  const ir::Function f = traced_then_dce([](Out<float> z, In<float> x, In<float> y) {
    for_range(0, 2, [&](Index k) {
      [[maybe_unused]] auto unused = load(x, {k}, {8}) * 3.0f;
      print("k = {}", k);
    });
    z.store(load_like(y, z));
  });
  ASSERT_EQ(count(f.body, OpKind::For), 1);
  EXPECT_EQ(count(f.body, OpKind::Print), 1);
  EXPECT_EQ(count(f.body, OpKind::Mul), 0);
  EXPECT_EQ(loads_from(f, 1), 0);
}

TEST(Dce, KeepsAnIfWhoseResultIsStored) {
  const ir::Function f = traced_then_dce([](Out<float> z, In<float> x, In<float>) {
    auto v = load_like(x, z);
    if_(z.tile_index(0) == 0, [&] { v = v * 2.0f; });
    z.store(v);
  });
  EXPECT_EQ(count(f.body, OpKind::If), 1);
  EXPECT_EQ(count(f.body, OpKind::Mul), 1);
}

}  // namespace
}  // namespace tessera::test

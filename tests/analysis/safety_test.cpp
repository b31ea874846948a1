// check_safety: per-kernel safety rules on the IR, with messages that name the kernel, the
// parameter and the rule.
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "ir/hand_ir.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/analysis/safety.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
using ir::OpKind;

std::string safety_error(const ir::Function& f) {
  try {
    analysis::check_safety(f);
  } catch (const KernelError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckSafety, RejectsAnOutParameterThatIsNeverStored) {
  const auto [where, line] = std::pair{SourceLoc::current(), __LINE__};
  ir::Function f = trace_kernel<Out<float>, Out<float>, In<float>>(
      "two_outs",
      {out_param("z", DType::F32, {8}), out_param("w", DType::F32, {8}),
       in_param("x", DType::F32, 1)},
      [](Out<float> z, Out<float>, In<float> x) { z.store(load_like(x, z)); }, where);
  analysis::promote_locals(f);
  EXPECT_EQ(safety_error(f),
            tessera::detail::cat(__FILE__, ":", line, ":", where.column,
                                 ": error: kernel 'two_outs' never stores to its Out "
                                 "parameter 'w', so its tiles would keep whatever they "
                                 "held before; store a tile to it, or make it an In "
                                 "parameter"));
}

TEST(CheckSafety, AcceptsAKernelThatStoresEveryOut) {
  ir::Function f = trace_kernel<Out<float>, Out<float>, In<float>>(
      "two_outs",
      {out_param("z", DType::F32, {8}), out_param("w", DType::F32, {8}),
       in_param("x", DType::F32, 1)},
      [](Out<float> z, Out<float> w, In<float> x) {
        z.store(load_like(x, z));
        // A store inside a loop counts too.
        for_range(0, 1, [&](Index) { w.store(Tile<float>::zeros({8})); });
      });
  analysis::promote_locals(f);
  EXPECT_EQ(safety_error(f), "");
}

// IR that the DSL cannot produce (In has no store; Out cannot be loaded), built by hand.
TEST(CheckSafety, RejectsAStoreToAnInParameter) {
  HandIR h;
  h.f.stage = ir::Stage::Promoted;
  const ir::ValueId c = h.constant(h.body(), f32({4}));
  ir::Attrs a;
  a.param = 0;
  h.op(h.body(), OpKind::Store, {c}, {}, a);
  EXPECT_EQ(safety_error(h.f), "");  // the twin: a store to the Out
  a.param = 1;
  h.op(h.body(), OpKind::Store, {c}, {}, a, kBlamed);
  EXPECT_EQ(safety_error(h.f),
            "blamed.cpp:42:7: error: kernel 'k' stores to 'x', which is not an Out parameter; "
            "inputs are read-only");
}

TEST(CheckSafety, RejectsALoadFromAnOutParameter) {
  HandIR h;
  h.f.stage = ir::Stage::Promoted;
  const ir::ValueId i = h.constant(h.body(), i32());
  // Each op gets its own Attrs, moved in: g++ 13 at -O2 reports an inlined Attrs copy's Shape
  // as out of bounds (-Warray-bounds, a false positive inside std::vector).
  const auto load_of = [](int param) {
    ir::Attrs load;
    load.param = param;
    load.shape = {4};
    return load;
  };
  const ir::ValueId v = h.op1(h.body(), OpKind::Load, {i}, f32({4}), load_of(1));
  ir::Attrs store;
  store.param = 0;
  h.op(h.body(), OpKind::Store, {v}, {}, store);
  EXPECT_EQ(safety_error(h.f), "");  // the twin: a load from the In
  h.op1(h.body(), OpKind::Load, {i}, f32({4}), load_of(0), kBlamed);
  EXPECT_EQ(safety_error(h.f),
            "blamed.cpp:42:7: error: kernel 'k' loads from 'z', which is not an In parameter");
}

}  // namespace
}  // namespace tessera::test

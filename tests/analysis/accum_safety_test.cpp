// The rules of an Accum parameter, on the IR: its only write is accumulate (no store, no
// store_part), nothing reads it (no load, no gather), and accumulate targets nothing else (an
// Out keeps its disjoint tiles). Each attack is built by hand (the DSL has no spelling for it)
// and pinned to its message, beside a twin that passes.
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

// `k(z: out f32 tile [4], x: in f32 rank 1, n: scalar i32, h: accum f32 rank 1)`, grid rank 1;
// the body stores z (so the Out rule holds) and adds a constant into h at element 0 (the twin).
struct AccumIR : HandIR {
  AccumIR() {
    f.stage = ir::Stage::Promoted;
    f.params.push_back({"h", ir::ParamKind::Accum, DType::F32, 1, {}});
    tile = constant(body(), f32({4}));
    zero = constant(body(), i32());
    ir::Attrs store;
    store.param = 0;
    op(body(), OpKind::Store, {tile}, {}, store);
    ir::Attrs add;
    add.param = 3;
    op(body(), OpKind::Accumulate, {tile, zero}, {}, add);
  }
  ir::ValueId tile = 0, zero = 0;
};

TEST(AccumSafety, RejectsAStoreToAnAccum) {
  AccumIR h;
  EXPECT_EQ(safety_error(h.f), "");
  ir::Attrs a;
  a.param = 3;
  h.op(h.body(), OpKind::Store, {h.tile}, {}, a, kBlamed);
  EXPECT_EQ(safety_error(h.f),
            "blamed.cpp:42:7: error: kernel 'k' stores to 'h', an Accum parameter: the tiles of "
            "an Accum may overlap, so its only permitted write is an add that commutes with "
            "every other block's (h.add(tile, {...})); to overwrite a tile, make it an Out "
            "parameter");
}

TEST(AccumSafety, RejectsAStorePartToAnAccum) {
  AccumIR h;
  ir::Attrs a;
  a.param = 3;
  h.op(h.body(), OpKind::StorePart, {h.tile, h.zero}, {}, a, kBlamed);
  EXPECT_NE(safety_error(h.f).find("blamed.cpp:42:7: error: kernel 'k' stores to 'h', an Accum "
                                   "parameter"),
            std::string::npos);
}

TEST(AccumSafety, RejectsALoadOfAnAccum) {
  AccumIR h;
  ir::Attrs load;
  load.param = 1;
  load.shape = {4};
  h.op1(h.body(), OpKind::Load, {h.zero}, f32({4}), load);
  EXPECT_EQ(safety_error(h.f), "");  // the twin: a load of the In
  load.param = 3;
  h.op1(h.body(), OpKind::Load, {h.zero}, f32({4}), load, kBlamed);
  EXPECT_EQ(safety_error(h.f),
            "blamed.cpp:42:7: error: kernel 'k' reads 'h', an Accum parameter: other blocks add "
            "into it while this one runs, so what a read sees would depend on their timing; read "
            "the sums after the launch (pass the tensor to a later launch as an In)");
}

TEST(AccumSafety, RejectsAGatherOfAnAccum) {
  AccumIR h;
  ir::Attrs g;
  g.param = 3;
  g.shape = {4};
  const ir::ValueId rows = h.constant(h.body(), {DType::I32, {4}});
  h.op1(h.body(), OpKind::Gather, {rows}, f32({4}), g, kBlamed);
  EXPECT_NE(safety_error(h.f).find("blamed.cpp:42:7: error: kernel 'k' reads 'h', an Accum"),
            std::string::npos);
}

TEST(AccumSafety, RejectsAnAccumulateIntoAnOut) {
  AccumIR h;
  ir::Attrs a;
  a.param = 0;
  h.op(h.body(), OpKind::Accumulate, {h.tile, h.zero}, {}, a, kBlamed);
  EXPECT_EQ(safety_error(h.f),
            "blamed.cpp:42:7: error: kernel 'k' accumulates into 'z', which is not an Accum "
            "parameter; only an Accum may take adds from every block (declare it Accum<T>), and "
            "an Out is written only by its own tile's store");
}

TEST(AccumSafety, AnAccumNeedsNoAddOnEveryPath) {
  // Unlike an Out, an Accum that a path never adds into keeps its initial values, which is
  // what a sum of nothing is: no "stores on every path" rule applies.
  ir::Function f = trace_kernel<Accum<float>, In<float>, Scalar<int32_t>>(
      "maybe_add",
      {{"h", ir::ParamKind::Accum, DType::F32, 1, {}, 1},
       in_param("x", DType::F32, 1),
       scalar_param("n", DType::I32)},
      [](Accum<float> h, In<float> x, Scalar<int32_t> n) {
        if_(n > 0, [&] { h.add(load(x, {tile_index(0)}, {8}), {tile_index(0)}); });
      });
  analysis::promote_locals(f);
  EXPECT_EQ(safety_error(f), "");
  EXPECT_EQ(f.grid_rank, 1);  // from the grid the Accum's launch declares
}

// What the DSL cannot write is also refused where the tracer types it, at the user's line.
TEST(AccumSafety, AnAccumOfAHalfTypeIsATypedErrorAtTheUsersLine) {
  const auto [where, line] = std::pair{SourceLoc::current(), __LINE__};
  std::string message;
  try {
    (void)trace_kernel<Accum<half>, In<half>>(
        "half_sum",
        {{"h", ir::ParamKind::Accum, DType::F16, 1, {}, 1}, in_param("x", DType::F16, 1)},
        [](Accum<half> h, In<half> x) { h.add(load(x, {tile_index(0)}, {8}), {0}); }, where);
  } catch (const KernelError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find(tessera::detail::cat(__FILE__, ":", line + 6, ":")), std::string::npos)
      << message;
  EXPECT_NE(message.find("accumulate into 'h', an Accum<f16>: adds are atomic on the GPU, which "
                         "holds them for f32, f64, i32 and i64 only; accumulate in f32 (or i32) "
                         "and cast the result afterwards"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace tessera::test

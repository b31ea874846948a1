// promote_locals: C++ variables that for_range/if_ bodies read and reassign become loop-carried
// values and if results, and nothing else does.
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "analysis/ir_query.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/verifier.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
using ir::OpKind;

ir::Function promote(ir::Function f) {
  analysis::promote_locals(f);
  if (auto d = ir::verify(f)) ADD_FAILURE() << "invalid after promote_locals: " << d->message;
  EXPECT_EQ(f.stage, ir::Stage::Promoted);
  EXPECT_EQ(count_locals(f.body), 0);
  return f;
}

const std::vector<ir::Param> kOneInOneOut{out_param("z", DType::F32, {8}),
                                          in_param("x", DType::F32, 1)};
template <class F>
ir::Function trace_z_x(F&& body) {
  return trace_kernel<Out<float>, In<float>>("k", kOneInOneOut, std::forward<F>(body));
}

// The yield that ends `b`.
const ir::Op& yield_of(const ir::Block& b) {
  return b.ops.back();
}

TEST(PromoteLocals, GemmTracesToExactlyOneLoopCarriedValue) {
  ir::Function traced = trace_kernel<Out<float>, In<half>, In<half>>(
      "gemm",
      {out_param("c", DType::F32, {32, 16}), in_param("a", DType::F16, 2),
       in_param("b", DType::F16, 2)},
      [](Out<float> c, In<half> a, In<half> b) {
        auto acc = Tile<float>::zeros({32, 16});
        for_range(0, 4, [&](Index k) {
          acc = mma(load(a, {c.tile_index(0), k}, {32, 8}), load(b, {k, c.tile_index(1)}, {8, 16}),
                    acc);
        });
        c.store(acc);
      });
  EXPECT_EQ(traced.vars.size(), 1u);  // the accumulator, and nothing else, crossed the body
  const ir::Function f = promote(std::move(traced));
  const ir::Op* loop = only(f.body, OpKind::For);
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->operands.size(), 4u);  // lb, ub, step, the accumulator's initial value
  ASSERT_EQ(loop->results.size(), 1u);
  const ir::Block& body = loop->regions[0];
  ASSERT_EQ(body.args.size(), 2u);  // iv, acc
  // The init is the zeros tile; the body's mma accumulates into the carried argument and yields.
  const ir::Op* zeros = only(f, f.body, OpKind::Constant, {DType::F32, {32, 16}});
  ASSERT_NE(zeros, nullptr);
  EXPECT_EQ(loop->operands[3], zeros->results[0]);
  const ir::Op* mma = only(body, OpKind::Mma);
  ASSERT_NE(mma, nullptr);
  EXPECT_EQ(mma->operands[2], body.args[1]);
  EXPECT_EQ(yield_of(body).operands, std::vector<ir::ValueId>{mma->results[0]});
  // After the loop, the accumulator is the loop's result.
  EXPECT_EQ(only(f.body, OpKind::Store)->operands[0], loop->results[0]);
  EXPECT_EQ(f.type(loop->results[0]), (ir::Type{DType::F32, {32, 16}}));
}

TEST(PromoteLocals, VariableOnlyReadInALoopIsNotCarried) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float> x) {
    auto bias = load_like(x, z);
    auto acc = Tile<float>::zeros({8});
    for_range(0, 4, [&](Index) { acc = acc + bias; });
    z.store(acc);
  }));
  const ir::Op* loop = only(f.body, OpKind::For);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->results.size(), 1u);  // acc only
  EXPECT_EQ(loop->regions[0].args.size(), 2u);
  // Inside the body, bias is the value loaded before the loop.
  const ir::Op* load = only(f.body, OpKind::Load);
  const ir::Op* add = only(loop->regions[0], OpKind::Add);
  ASSERT_NE(load, nullptr);
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->operands, (std::vector<ir::ValueId>{loop->regions[0].args[1], load->results[0]}));
}

TEST(PromoteLocals, LoopThatOnlyReadsCarriesNothing) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float> x) {
    auto v = load_like(x, z);
    for_range(0, 2, [&](Index) { z.store(v); });
  }));
  const ir::Op* loop = only(f.body, OpKind::For);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->operands.size(), 3u);
  EXPECT_TRUE(loop->results.empty());
  EXPECT_EQ(loop->regions[0].args.size(), 1u);
  EXPECT_EQ(only(loop->regions[0], OpKind::Store)->operands[0],
            only(f.body, OpKind::Load)->results[0]);
}

TEST(PromoteLocals, VariableReadInALoopAndReassignedAfterItIsNotCarried) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float> x) {
    auto v = load_like(x, z);
    for_range(0, 2, [&](Index) { z.store(v); });
    v = v * 2.0f;
    z.store(v);
  }));
  const ir::Op* loop = only(f.body, OpKind::For);
  ASSERT_NE(loop, nullptr);
  EXPECT_TRUE(loop->results.empty());
  const ir::Op* load = only(f.body, OpKind::Load);
  const ir::Op* mul = only(f, f.body, OpKind::Mul, {DType::F32, {8}});
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->operands[0], load->results[0]);
  EXPECT_EQ(only(f.body, OpKind::Store)->operands[0], mul->results[0]);
}

TEST(PromoteLocals, ReassignmentInTheBlockThatMadeAValueMakesNoVariable) {
  const ir::Function traced = trace_z_x([](Out<float> z, In<float> x) {
    auto v = load_like(x, z);
    v = v * 2.0f;
    v = v + 1.0f;
    z.store(v);
  });
  EXPECT_TRUE(traced.vars.empty());
  EXPECT_EQ(count_locals(traced.body), 0);
}

TEST(PromoteLocals, IfReassigningAVariableYieldsAnIfResult) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float> x) {
    auto v = load_like(x, z);
    if_(z.tile_index(0) == 1, [&] { v = v * 3.0f; });
    z.store(v);
  }));
  const ir::Op* branch = only(f.body, OpKind::If);
  ASSERT_NE(branch, nullptr);
  ASSERT_EQ(branch->results.size(), 1u);
  const ir::Op* load = only(f.body, OpKind::Load);
  const ir::Op* mul = only(branch->regions[0], OpKind::Mul);
  ASSERT_NE(mul, nullptr);
  // then: the new value; else (no body): the value from before the if.
  EXPECT_EQ(yield_of(branch->regions[0]).operands, std::vector<ir::ValueId>{mul->results[0]});
  EXPECT_EQ(yield_of(branch->regions[1]).operands, std::vector<ir::ValueId>{load->results[0]});
  EXPECT_EQ(only(f.body, OpKind::Store)->operands[0], branch->results[0]);
}

TEST(PromoteLocals, NestedLoopsBothCarryAnOuterVariableReassignedInTheInnerLoop) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float> x) {
    auto acc = Tile<float>::zeros({8});
    for_range(0, 3, [&](Index i) {
      for_range(0, 2, [&](Index j) { acc = acc + load(x, {i * 2 + j}, {8}); });
    });
    z.store(acc);
  }));
  const ir::Op* outer = only(f.body, OpKind::For);
  ASSERT_NE(outer, nullptr);
  ASSERT_EQ(outer->results.size(), 1u);
  const ir::Block& outer_body = outer->regions[0];
  const ir::Op* inner = only(outer_body, OpKind::For);
  ASSERT_NE(inner, nullptr);
  ASSERT_EQ(inner->results.size(), 1u);
  // The inner loop starts from the outer loop's carried value and hands its result back to it.
  EXPECT_EQ(inner->operands[3], outer_body.args[1]);
  EXPECT_EQ(yield_of(outer_body).operands, std::vector<ir::ValueId>{inner->results[0]});
  const ir::Op* add = only(f, inner->regions[0], OpKind::Add, {DType::F32, {8}});
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->operands[0], inner->regions[0].args[1]);
  EXPECT_EQ(only(f.body, OpKind::Store)->operands[0], outer->results[0]);
}

TEST(PromoteLocals, VariableDeclaredInsideALoopBodyIsLocalToIt) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float>) {
    auto acc = Tile<float>::zeros({8});
    for_range(0, 3, [&](Index) {
      auto t = Tile<float>::full({8}, 1.0f);
      for_range(0, 2, [&](Index) { t = t * 2.0f; });
      acc = acc + t;
    });
    z.store(acc);
  }));
  const ir::Op* outer = only(f.body, OpKind::For);
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->results.size(), 1u);  // acc; t starts afresh in every iteration
  const ir::Op* inner = only(outer->regions[0], OpKind::For);
  ASSERT_NE(inner, nullptr);
  ASSERT_EQ(inner->results.size(), 1u);  // t
  // t's initial value is the constant made in the outer body.
  const ir::Op* ones = only(f, outer->regions[0], OpKind::Constant, {DType::F32, {8}});
  ASSERT_NE(ones, nullptr);
  EXPECT_EQ(inner->operands[3], ones->results[0]);
}

TEST(PromoteLocals, TwoReassignedVariablesAreTwoCarriedValues) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float> x) {
    auto lo = Tile<float>::full({8}, 1e30f);
    auto hi = Tile<float>::full({8}, -1e30f);
    for_range(0, 4, [&](Index k) {
      auto t = load(x, {k}, {8});
      lo = minimum(lo, t);
      hi = maximum(hi, t);
    });
    z.store(hi - lo);
  }));
  const ir::Op* loop = only(f.body, OpKind::For);
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->results.size(), 2u);
  const ir::Block& body = loop->regions[0];
  const ir::Op* min = only(body, OpKind::Min);
  const ir::Op* max = only(body, OpKind::Max);
  ASSERT_NE(min, nullptr);
  ASSERT_NE(max, nullptr);
  // Each variable has its own slot: init, body argument, yield operand and result.
  auto slot_of = [&](const ir::Op* op) {
    for (size_t i = 1; i < body.args.size(); ++i)
      if (op->operands[0] == body.args[i]) return i - 1;
    return size_t{99};
  };
  const size_t lo = slot_of(min), hi = slot_of(max);
  ASSERT_LT(lo, 2u);
  ASSERT_LT(hi, 2u);
  ASSERT_NE(lo, hi);
  std::vector<const ir::Op*> inits = ops_of(f.body, OpKind::Constant);
  auto init_value = [&](size_t slot) {
    for (const ir::Op* c : inits)
      if (c->results[0] == loop->operands[3 + slot]) return c->attrs.value;
    return 0.0;
  };
  EXPECT_FLOAT_EQ(init_value(lo), 1e30f);
  EXPECT_FLOAT_EQ(init_value(hi), -1e30f);
  EXPECT_EQ(yield_of(body).operands[lo], min->results[0]);
  EXPECT_EQ(yield_of(body).operands[hi], max->results[0]);
  const ir::Op* sub = only(f.body, OpKind::Sub);
  ASSERT_NE(sub, nullptr);
  EXPECT_EQ(sub->operands, (std::vector<ir::ValueId>{loop->results[hi], loop->results[lo]}));
}

TEST(PromoteLocals, IfInsideALoopIsCarriedByTheLoopAndYieldedByTheIf) {
  const ir::Function f = promote(trace_z_x([](Out<float> z, In<float>) {
    auto v = Tile<float>::zeros({8});
    for_range(0, 5, [&](Index k) {
      if_(
          k < 2, [&] { v = v + 1.0f; }, [&] { v = v - 1.0f; });
    });
    z.store(v);
  }));
  const ir::Op* loop = only(f.body, OpKind::For);
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->results.size(), 1u);
  const ir::Op* branch = only(loop->regions[0], OpKind::If);
  ASSERT_NE(branch, nullptr);
  ASSERT_EQ(branch->results.size(), 1u);
  EXPECT_EQ(yield_of(loop->regions[0]).operands, std::vector<ir::ValueId>{branch->results[0]});
  EXPECT_EQ(only(branch->regions[0], OpKind::Add)->operands[0], loop->regions[0].args[1]);
  EXPECT_EQ(only(branch->regions[1], OpKind::Sub)->operands[0], loop->regions[0].args[1]);
}

}  // namespace
}  // namespace tessera::test

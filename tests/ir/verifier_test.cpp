// The verifier on invalid IR, in the manner of MLIR's invalid.mlir: each case builds a broken
// function by hand, pins the exact diagnostic and the op it blames, and has a valid twin, built by
// the same code with the one defect left out, that verifies.
#include <gtest/gtest.h>

#include <functional>

#include "hand_ir.hpp"
#include "tessera/ir/verifier.hpp"

namespace tessera::test {
namespace {

using ir::OpKind;
using Make = std::function<ir::Function(bool broken)>;

// The blamed op carries kBlamed in both twins; only `broken` decides whether it is wrong.
void expect_rejected(const Make& make, const std::string& message) {
  const auto valid = ir::verify(make(false));
  EXPECT_FALSE(valid.has_value()) << "the valid twin was rejected: " << valid->message;
  const auto d = ir::verify(make(true));
  ASSERT_TRUE(d.has_value()) << "the broken function verified";
  EXPECT_EQ(d->message, message);
  EXPECT_STREQ(d->loc.file, kBlamed.file);
  EXPECT_EQ(d->loc.line, kBlamed.line);
}

ir::Attrs with_shape(Shape s) {
  ir::Attrs a;
  a.shape = std::move(s);
  return a;
}
ir::Attrs with_axis(int axis) {
  ir::Attrs a;
  a.axis = axis;
  return a;
}
ir::Attrs with_param(int param) {
  ir::Attrs a;
  a.param = param;
  return a;
}

TEST(VerifierRejects, UseBeforeDefinition) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.value(f32({4})), n = h.value(f32({4}));
        ir::Attrs ca;
        ca.dtype = DType::F32;
        ca.shape = {4};
        if (!broken) h.op(h.body(), OpKind::Constant, {}, {c}, ca);
        h.op(h.body(), OpKind::Neg, {c}, {n}, {}, kBlamed);
        if (broken) h.op(h.body(), OpKind::Constant, {}, {c}, ca);
        h.op(h.body(), OpKind::Store, {n}, {}, with_param(0));
        return h.f;
      },
      "'neg' uses a value that is not defined before it in an enclosing block");
}

TEST(VerifierRejects, UseOfALoopBodyValueAfterTheLoop) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId lb = h.constant(h.body(), i32()), ub = h.constant(h.body(), i32(), 4);
        const ir::ValueId outside = h.constant(h.body(), f32({4}));
        ir::Op& loop = h.op(h.body(), OpKind::For, {lb, ub, lb});
        loop.regions.resize(1);
        loop.regions[0].args = {h.value(i32())};
        const ir::ValueId inside = h.constant(loop.regions[0], f32({4}), 1);
        h.op(loop.regions[0], OpKind::Yield, {});
        h.op(h.body(), OpKind::Store, {broken ? inside : outside}, {}, with_param(0), kBlamed);
        return h.f;
      },
      "'store' uses a value that is not defined before it in an enclosing block");
}

// prefetch: the kernel's body only (the CUDA backend issues it once, before the wait for the grids
// before it), and an In parameter only.
TEST(VerifierRejects, PrefetchInsideALoop) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId lb = h.constant(h.body(), i32()), ub = h.constant(h.body(), i32(), 4);
        if (!broken) h.op(h.body(), OpKind::Prefetch, {}, {}, with_param(1), kBlamed);
        ir::Op& loop = h.op(h.body(), OpKind::For, {lb, ub, lb});
        loop.regions.resize(1);
        loop.regions[0].args = {h.value(i32())};
        if (broken) h.op(loop.regions[0], OpKind::Prefetch, {}, {}, with_param(1), kBlamed);
        h.op(loop.regions[0], OpKind::Yield, {});
        return h.f;
      },
      "'prefetch' must be in the kernel's body, outside loops and branches");
}

TEST(VerifierRejects, PrefetchOfAnOutOrOfNoParameter) {
  for (const int bad : {0, 2, 3}) {
    const std::string message =
        bad == 0   ? "'prefetch' is ill-typed: prefetch of 'z', which is an Out parameter; only an "
                     "In parameter, which no block writes, may be fetched before the kernels before "
                     "this one have finished"
        : bad == 2 ? "'prefetch' is ill-typed: prefetch of 'n', which is a Scalar parameter; only "
                     "an In parameter, which no block writes, may be fetched before the kernels "
                     "before this one have finished"
                   : "'prefetch' is ill-typed: prefetch names parameter 3, but the kernel has 3";
    expect_rejected(
        [bad](bool broken) {
          HandIR h;
          h.op(h.body(), OpKind::Prefetch, {}, {}, with_param(broken ? bad : 1), kBlamed);
          return h.f;
        },
        message);
  }
}

TEST(VerifierRejects, ValueDefinedTwice) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4}));
        ir::Attrs a;
        a.dtype = DType::F32;
        a.shape = {4};
        h.op(h.body(), OpKind::Constant, {}, {broken ? c : h.value(f32({4}))}, a, kBlamed);
        return h.f;
      },
      "'constant' defines value %0 a second time");
}

TEST(VerifierRejects, WrongOperandCount) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4}));
        std::vector<ir::ValueId> operands{c, c};
        if (broken) operands.pop_back();
        h.op1(h.body(), OpKind::Add, operands, f32({4}), {}, kBlamed);
        return h.f;
      },
      "'add' has 1 operands; it takes 2");
}

TEST(VerifierRejects, WrongResultCount) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4}));
        std::vector<ir::ValueId> results;
        if (broken) results.push_back(h.value(f32({4})));
        h.op(h.body(), OpKind::Store, {c}, results, with_param(0), kBlamed);
        return h.f;
      },
      "'store' has 1 results; it has 0");
}

TEST(VerifierRejects, WrongResultType) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4}));
        h.op1(h.body(), OpKind::Add, {c, c}, f32({broken ? 8 : 4}), {}, kBlamed);
        return h.f;
      },
      "'add' result 0 is f32[8], but its operands give f32[4]");
}

TEST(VerifierRejects, OperandsOfDifferentTypes) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId a = h.constant(h.body(), f32({4}));
        const ir::ValueId b = h.constant(h.body(), broken ? f16({4}) : f32({4}));
        h.op1(h.body(), OpKind::Mul, {a, b}, f32({4}), {}, kBlamed);
        return h.f;
      },
      "'mul' is ill-typed: mul needs operands of one type, not f32[4] and f16[4]");
}

// if (cond) yield a else yield b, with result type f32[4].
ir::Function if_yielding(bool broken) {
  HandIR h;
  const ir::ValueId cond = h.constant(h.body(), boolean(), 1);
  ir::Op& branch = h.op(h.body(), OpKind::If, {cond}, {h.value(f32({4}))});
  branch.regions.resize(2);
  const ir::ValueId a = h.constant(branch.regions[0], f32({4}), 1);
  h.op(branch.regions[0], OpKind::Yield, {a});
  const ir::ValueId b = h.constant(branch.regions[1], f32({broken ? 8 : 4}), 2);
  h.op(branch.regions[1], OpKind::Yield, {b}, {}, {}, kBlamed);
  return h.f;
}

TEST(VerifierRejects, YieldTypeMismatch) {
  expect_rejected(if_yielding, "'yield' yields f32[8] for result 0 of type f32[4]");
}

// for %iv = 0 to 4 step 1 carry(%acc = init) { yield %acc + 1 } -> f32[4]
struct Loop {
  HandIR h;
  ir::Op* op;
  ir::ValueId init;
};
Loop carrying_loop(SourceLoc loop_loc = kHandLoc) {
  Loop l;
  HandIR& h = l.h;
  const ir::ValueId lb = h.constant(h.body(), i32()), ub = h.constant(h.body(), i32(), 4);
  const ir::ValueId step = h.constant(h.body(), i32(), 1);
  l.init = h.constant(h.body(), f32({4}));
  l.op = &h.op(h.body(), OpKind::For, {lb, ub, step, l.init}, {h.value(f32({4}))}, {}, loop_loc);
  l.op->regions.resize(1);
  return l;
}

TEST(VerifierRejects, ForBodyWithoutTheCarriedArgument) {
  expect_rejected(
      [](bool broken) {
        Loop l = carrying_loop(kBlamed);
        ir::Block& body = l.op->regions[0];
        body.args = {l.h.value(i32())};
        ir::ValueId carried = l.init;
        if (!broken) body.args.push_back(carried = l.h.value(f32({4})));
        // The broken body yields the init, which is visible there, so only the arity is wrong.
        l.h.op(body, OpKind::Yield, {carried});
        return l.h.f;
      },
      "'for' body takes 1 arguments; it needs the induction variable and 1 carried values");
}

TEST(VerifierRejects, ForCarriedTypeDiffersInTheBody) {
  expect_rejected(
      [](bool broken) {
        Loop l = carrying_loop(kBlamed);
        ir::Block& body = l.op->regions[0];
        const ir::ValueId acc = l.h.value(f32({broken ? 8 : 4}));
        body.args = {l.h.value(i32()), acc};
        l.h.op(body, OpKind::Yield, {broken ? l.init : acc});
        return l.h.f;
      },
      "'for' carried value 0 is f32[8] in the body but f32[4] outside");
}

TEST(VerifierRejects, ForInductionVariableThatIsNotI32) {
  expect_rejected(
      [](bool broken) {
        Loop l = carrying_loop(kBlamed);
        ir::Block& body = l.op->regions[0];
        const ir::ValueId acc = l.h.value(f32({4}));
        body.args = {l.h.value(broken ? ir::Type{DType::I64, {}} : i32()), acc};
        l.h.op(body, OpKind::Yield, {acc});
        return l.h.f;
      },
      "'for' induction variable must be an i32 scalar");
}

TEST(VerifierRejects, ForYieldingTooFewValues) {
  expect_rejected(
      [](bool broken) {
        Loop l = carrying_loop();
        ir::Block& body = l.op->regions[0];
        const ir::ValueId acc = l.h.value(f32({4}));
        body.args = {l.h.value(i32()), acc};
        std::vector<ir::ValueId> yielded{acc};
        if (broken) yielded.clear();
        l.h.op(body, OpKind::Yield, yielded, {}, {}, kBlamed);
        return l.h.f;
      },
      "'yield' yields 0 values to a 'for' with 1 results");
}

TEST(VerifierRejects, RegionWithoutAYield) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId cond = h.constant(h.body(), boolean(), 1);
        ir::Op& branch = h.op(h.body(), OpKind::If, {cond}, {}, {}, kBlamed);
        branch.regions.resize(2);
        h.op(branch.regions[0], OpKind::Yield, {});
        h.constant(branch.regions[1], f32({4}));
        if (!broken) h.op(branch.regions[1], OpKind::Yield, {});
        return h.f;
      },
      "'if' region does not end with a yield");
}

TEST(VerifierRejects, YieldThatIsNotTheLastOp) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId cond = h.constant(h.body(), boolean(), 1);
        ir::Op& branch = h.op(h.body(), OpKind::If, {cond});
        branch.regions.resize(2);
        h.op(branch.regions[0], OpKind::Yield, {});
        if (broken) h.op(branch.regions[1], OpKind::Yield, {}, {}, {}, kBlamed);
        h.constant(branch.regions[1], f32({4}));
        h.op(branch.regions[1], OpKind::Yield, {}, {}, {}, kBlamed);
        return h.f;
      },
      "'yield' must be the last op of a for or if region");
}

TEST(VerifierRejects, IfRegionWithArguments) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId cond = h.constant(h.body(), boolean(), 1);
        ir::Op& branch = h.op(h.body(), OpKind::If, {cond}, {}, {}, kBlamed);
        branch.regions.resize(2);
        if (broken) branch.regions[0].args.push_back(h.value(i32()));
        h.op(branch.regions[0], OpKind::Yield, {});
        h.op(branch.regions[1], OpKind::Yield, {});
        return h.f;
      },
      "'if' regions take no arguments");
}

TEST(VerifierRejects, LocalOpsAfterPromotion) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        h.f.vars.push_back(f32({4}));
        const ir::ValueId c = h.constant(h.body(), f32({4}));
        ir::Attrs var;
        var.var = 0;
        h.op(h.body(), OpKind::LocalStore, {c}, {}, var, kBlamed);
        h.op1(h.body(), OpKind::LocalLoad, {}, f32({4}), var);
        h.f.stage = broken ? ir::Stage::Promoted : ir::Stage::Traced;
        return h.f;
      },
      "'local_store' remains after promote_locals");
}

TEST(VerifierRejects, LocalStoreOfTheWrongType) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        h.f.vars.push_back(f32({4}));
        const ir::ValueId c = h.constant(h.body(), f32({broken ? 2 : 4}));
        ir::Attrs var;
        var.var = 0;
        h.op(h.body(), OpKind::LocalStore, {c}, {}, var, kBlamed);
        return h.f;
      },
      "'local_store' is ill-typed: local_store of f32[2] to a variable of type f32[4]");
}

TEST(VerifierRejects, StoreToAnInParameter) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4}));
        h.op(h.body(), OpKind::Store, {c}, {}, with_param(broken ? 1 : 0), kBlamed);
        return h.f;
      },
      "'store' is ill-typed: store to 'x', which is not an Out parameter; declare it Out<f32> to "
      "write it");
}

TEST(VerifierRejects, StoreOfTheWrongTileShape) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({broken ? 8 : 4}));
        h.op(h.body(), OpKind::Store, {c}, {}, with_param(0), kBlamed);
        return h.f;
      },
      "'store' is ill-typed: store of a f32[8] tile to 'z', whose tiles are f32[4]");
}

TEST(VerifierRejects, LoadFromAnOutParameter) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId i = h.constant(h.body(), i32());
        ir::Attrs a = with_shape({4});
        a.param = broken ? 0 : 1;
        h.op1(h.body(), OpKind::Load, {i}, f32({4}), a, kBlamed);
        return h.f;
      },
      "'load' is ill-typed: load from 'z', which is an Out parameter; only In parameters are "
      "loaded");
}

TEST(VerifierRejects, LoadWithTheWrongNumberOfIndices) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId i = h.constant(h.body(), i32());
        ir::Attrs a = with_shape({4});
        a.param = 1;
        std::vector<ir::ValueId> index{i};
        if (broken) index.push_back(i);
        h.op1(h.body(), OpKind::Load, index, f32({4}), a, kBlamed);
        return h.f;
      },
      "'load' is ill-typed: load from 'x' gives 2 tile indices, but the tensor has rank 1");
}

TEST(VerifierRejects, MmaShapeMismatch) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId a = h.constant(h.body(), f16({16, 8}));
        const ir::ValueId b = h.constant(h.body(), f16({broken ? 16 : 8, 16}));
        const ir::ValueId acc = h.constant(h.body(), f32({16, 16}));
        h.op1(h.body(), OpKind::Mma, {a, b, acc}, f32({16, 16}), {}, kBlamed);
        return h.f;
      },
      "'mma' is ill-typed: mma shapes do not chain: a f16[16, 8] @ b f16[16, 16] does not give acc "
      "f32[16, 16]");
}

TEST(VerifierRejects, MmaAccumulatingInANarrowerType) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId a = h.constant(h.body(), f32({16, 8}));
        const ir::ValueId b = h.constant(h.body(), f32({8, 16}));
        const ir::Type acc_type = broken ? f16({16, 16}) : f32({16, 16});
        const ir::ValueId acc = h.constant(h.body(), acc_type);
        h.op1(h.body(), OpKind::Mma, {a, b, acc}, acc_type, {}, kBlamed);
        return h.f;
      },
      "'mma' is ill-typed: mma of f32 operands cannot accumulate in f16 (f16/bf16 accumulate in "
      "f32 or themselves, f32 in f32, f64 in f64, i8 in i32)");
}

TEST(VerifierRejects, Tf32MmaOfOperandsOtherThanF32) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const auto t = [&](Shape s) { return broken ? f16(std::move(s)) : f32(std::move(s)); };
        const ir::ValueId a = h.constant(h.body(), t({16, 8}));
        const ir::ValueId b = h.constant(h.body(), t({8, 16}));
        const ir::ValueId acc = h.constant(h.body(), f32({16, 16}));
        ir::Attrs attrs;
        attrs.tf32 = true;
        h.op1(h.body(), OpKind::Mma, {a, b, acc}, f32({16, 16}), attrs, kBlamed);
        return h.f;
      },
      "'mma' is ill-typed: mma with Precision::tf32 rounds f32 operands to TF32, but these are "
      "f16; drop Precision::tf32, or pass f32 tiles");
}

TEST(VerifierRejects, BroadcastOfAnIncompatibleAxis) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({broken ? 3 : 1, 1}));
        h.op1(h.body(), OpKind::Broadcast, {c}, f32({4, 8}), with_shape({4, 8}), kBlamed);
        return h.f;
      },
      "'broadcast' is ill-typed: cannot broadcast f32[3, 1] to [4, 8]: axis 0 has extent 3, which "
      "is neither 1 nor 4");
}

TEST(VerifierRejects, BroadcastThatChangesTheRank) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), broken ? f32({8}) : f32({1, 8}));
        h.op1(h.body(), OpKind::Broadcast, {c}, f32({4, 8}), with_shape({4, 8}), kBlamed);
        return h.f;
      },
      "'broadcast' is ill-typed: broadcast from f32[8] to [4, 8] changes the rank; reshape first");
}

TEST(VerifierRejects, ReshapeThatChangesTheElementCount) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4, 8}));
        const Shape to = broken ? Shape{5, 6} : Shape{2, 16};
        h.op1(h.body(), OpKind::Reshape, {c}, f32(to), with_shape(to), kBlamed);
        return h.f;
      },
      "'reshape' is ill-typed: cannot reshape f32[4, 8] (32 elements) to [5, 6] (30 elements)");
}

TEST(VerifierRejects, PermuteOrderThatIsNotAPermutation) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4, 8}));
        ir::Attrs a;
        a.perm = broken ? std::vector<int64_t>{0, 0} : std::vector<int64_t>{1, 0};
        h.op1(h.body(), OpKind::Permute, {c}, f32({8, 4}), a, kBlamed);
        return h.f;
      },
      "'permute' is ill-typed: permute order [0, 0] is not a permutation of the 2 axes of f32[4, "
      "8]");
}

TEST(VerifierRejects, PermuteResultWithUnpermutedShape) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4, 8}));
        ir::Attrs a;
        a.perm = {1, 0};
        h.op1(h.body(), OpKind::Permute, {c}, broken ? f32({4, 8}) : f32({8, 4}), a, kBlamed);
        return h.f;
      },
      "'permute' result 0 is f32[4, 8], but its operands give f32[8, 4]");
}

TEST(VerifierRejects, ReduceAxisOutOfRange) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId c = h.constant(h.body(), f32({4, 8}));
        h.op1(h.body(), OpKind::ReduceSum, {c}, f32({4, 1}), with_axis(broken ? 2 : 1), kBlamed);
        return h.f;
      },
      "'reduce_sum' is ill-typed: reduce_sum along axis 2 of f32[4, 8], which has rank 2");
}

TEST(VerifierRejects, PrintWithMoreHolesThanValues) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId i = h.op1(h.body(), OpKind::TileIndex, {}, i32(), with_axis(0));
        const ir::ValueId n = h.op1(h.body(), OpKind::NumTiles, {}, i32(), with_axis(0));
        ir::Attrs a;
        a.text = "tile {} of {}";
        std::vector<ir::ValueId> values{i, n};
        if (broken) values.pop_back();
        h.op(h.body(), OpKind::Print, values, {}, a, kBlamed);
        return h.f;
      },
      "'print' is ill-typed: print format \"tile {} of {}\" has 2 {} but 1 values follow");
}

TEST(VerifierRejects, PrintOfATile) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::ValueId v = h.constant(h.body(), broken ? f32({4}) : f32({}));
        ir::Attrs a;
        a.text = "v = {}";
        h.op(h.body(), OpKind::Print, {v}, {}, a, kBlamed);
        return h.f;
      },
      "'print' is ill-typed: print takes scalars, not a f32[4] tile");
}

TEST(VerifierRejects, TileIndexAxisOutsideTheGrid) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        h.op1(h.body(), OpKind::TileIndex, {}, i32(), with_axis(broken ? 1 : 0), kBlamed);
        return h.f;
      },
      "'tile_index' is ill-typed: tile_index(1) is outside the grid, which has rank 1 (the rank of "
      "the kernel's Out partitions)");
}

TEST(VerifierRejects, ScalarParamOfATensorParameter) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        h.op1(h.body(), OpKind::ScalarParam, {}, i32(), with_param(broken ? 1 : 2), kBlamed);
        return h.f;
      },
      "'scalar_param' is ill-typed: parameter 'x' is not a Scalar");
}

TEST(VerifierRejects, UnaryFloatOpOnIntegers) {
  expect_rejected(
      [](bool broken) {
        HandIR h;
        const ir::Type t = broken ? ir::Type{DType::I32, {4}} : f32({4});
        const ir::ValueId c = h.constant(h.body(), t);
        h.op1(h.body(), OpKind::Exp, {c}, t, {}, kBlamed);
        return h.f;
      },
      "'exp' is ill-typed: exp needs a floating-point tile, not i32[4]; cast it first");
}

TEST(Verifier, ThrowsAnInternalErrorNamingTheStageAndKernel) {
  HandIR h;
  const ir::ValueId c = h.value(f32({4}));
  h.op1(h.body(), OpKind::Neg, {c}, f32({4}), {}, kBlamed);
  try {
    ir::verify_or_throw(h.f, "dce");
    FAIL() << "broken IR passed verify_or_throw";
  } catch (const InternalError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("internal error (a bug in Tessera): the IR of kernel 'k' is invalid after "
                         "dce: blamed.cpp:42:7: error: 'neg' uses a value that is not defined "
                         "before it in an enclosing block\n",
                         0),
              0u)
        << what;
  }
}

}  // namespace
}  // namespace tessera::test

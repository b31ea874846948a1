// Golden tests of the printer: small kernels are traced, promoted, and printed, and the text is
// compared whole. The text is what TESSERA_DUMP=ir shows, so a change here is a change users see.
// The promoted IR is put in canonical order (canonical_order), as the compile pipeline does, so
// these texts are the same whatever compiler built the test: operands come first to last, each
// right before its first use, although g++ traces `x + y` right to left and clang left to right.
// Values are numbered in program order.
#include <gtest/gtest.h>

#include <functional>

#include <tessera/tessera.hpp>

#include "tessera/analysis/canonical_order.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/serialize.hpp"
#include "tessera/ir/verifier.hpp"
#include "tile/trace_kernel.hpp"

using namespace tessera;
using namespace tessera::tile;
using namespace tessera::test;

namespace {

// Promotes, orders, verifies and prints.
std::string promoted(ir::Function f) {
  analysis::promote_locals(f);
  analysis::canonical_order(f);
  if (auto d = ir::verify(f)) return "invalid IR: " + d->message;
  return ir::print(f);
}

ir::Function trace_gemm() {
  return trace_kernel<Out<float>, In<half>, In<half>>(
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
}

// The same kernel with each call in a statement of its own, so that C++ sequences them: the
// traced IR (before canonical_order) is in the order C++ evaluated the calls.
ir::Function trace_gemm_in_statements() {
  return trace_kernel<Out<float>, In<half>, In<half>>(
      "gemm",
      {out_param("c", DType::F32, {32, 16}), in_param("a", DType::F16, 2),
       in_param("b", DType::F16, 2)},
      [](Out<float> c, In<half> a, In<half> b) {
        auto acc = Tile<float>::zeros({32, 16});
        for_range(0, 4, [&](Index k) {
          const Index i = c.tile_index(0);
          auto a_k = load(a, {i, k}, {32, 8});
          const Index j = c.tile_index(1);
          auto b_k = load(b, {k, j}, {8, 16});
          acc = mma(a_k, b_k, acc);
        });
        c.store(acc);
      });
}

TEST(Printer, AddGolden) {
  ir::Function f = trace_kernel<Out<float>, In<float>, In<float>>(
      "add",
      {out_param("z", DType::F32, {128}), in_param("x", DType::F32, 1),
       in_param("y", DType::F32, 1)},
      [](Out<float> z, In<float> x, In<float> y) { z.store(load_like(x, z) + load_like(y, z)); });
  EXPECT_EQ(
      promoted(std::move(f)),
      R"(kernel @add($z: out f32 tile [128], $x: in f32 rank 1, $y: in f32 rank 1) grid rank 1 {
  %0 = tile_index 0 : i32
  %1 = load $x[%0] pad 0 : f32[128]
  %2 = tile_index 0 : i32
  %3 = load $y[%2] pad 0 : f32[128]
  %4 = add %1, %3 : f32[128]
  store $z, %4
}
)");
}

// A prefetch keeps its place (it is a statement of the kernel's, like a store) and names its
// parameter.
TEST(Printer, PrefetchGolden) {
  ir::Function f = trace_kernel<Out<float>, In<float>, In<float>>(
      "add",
      {out_param("z", DType::F32, {128}), in_param("x", DType::F32, 1),
       in_param("y", DType::F32, 1)},
      [](Out<float> z, In<float> x, In<float> y) {
        prefetch(y);
        z.store(load_like(x, z) + load_like(y, z));
      });
  EXPECT_EQ(
      promoted(std::move(f)),
      R"(kernel @add($z: out f32 tile [128], $x: in f32 rank 1, $y: in f32 rank 1) grid rank 1 {
  prefetch $y
  %0 = tile_index 0 : i32
  %1 = load $x[%0] pad 0 : f32[128]
  %2 = tile_index 0 : i32
  %3 = load $y[%2] pad 0 : f32[128]
  %4 = add %1, %3 : f32[128]
  store $z, %4
}
)");
}

// And through the IR cache's bytes (the format's version moved to 4 with the op).
TEST(Printer, PrefetchSurvivesTheIrCachesRoundTrip) {
  const ir::Function f = trace_kernel<Out<float>, In<float>>(
      "copy", {out_param("z", DType::F32, {128}), in_param("x", DType::F32, 1)},
      [](Out<float> z, In<float> x) {
        prefetch(x);
        z.store(load_like(x, z));
      });
  const std::string bytes = ir::serialize(f);
  const std::optional<ir::Function> back = ir::deserialize(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(ir::print(*back), ir::print(f));
  EXPECT_NE(ir::print(*back).find("  prefetch $x\n"), std::string::npos);
}

TEST(Printer, RowReductionWithBroadcastGolden) {
  ir::Function f = trace_kernel<Out<float>, In<float>>(
      "softmax", {out_param("z", DType::F32, {4, 16}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) {
        auto t = load_like(x, z, Pad::neg_inf());
        auto e = exp(t - max(t, 1));
        z.store(e / sum(e, 1));
      });
  EXPECT_EQ(promoted(std::move(f)),
            R"(kernel @softmax($z: out f32 tile [4, 16], $x: in f32 rank 2) grid rank 2 {
  %0 = tile_index 0 : i32
  %1 = tile_index 1 : i32
  %2 = load $x[%0, %1] pad -inf : f32[4, 16]
  %3 = reduce_max %2 axis 1 : f32[4, 1]
  %4 = broadcast %3 : f32[4, 16]
  %5 = sub %2, %4 : f32[4, 16]
  %6 = exp %5 : f32[4, 16]
  %7 = reduce_sum %6 axis 1 : f32[4, 1]
  %8 = broadcast %7 : f32[4, 16]
  %9 = div %6, %8 : f32[4, 16]
  store $z, %9
}
)");
}

TEST(Printer, GemmLoopGolden) {
  EXPECT_EQ(
      promoted(trace_gemm()),
      R"(kernel @gemm($c: out f32 tile [32, 16], $a: in f16 rank 2, $b: in f16 rank 2) grid rank 2 {
  %0 = constant 0 : i32
  %1 = constant 4 : i32
  %2 = constant 1 : i32
  %3 = constant 0 : f32[32, 16]
  %4 = for %5 = %0 to %1 step %2 carry(%6 = %3) -> (f32[32, 16]) {
    %7 = tile_index 0 : i32
    %8 = load $a[%7, %5] pad 0 : f16[32, 8]
    %9 = tile_index 1 : i32
    %10 = load $b[%5, %9] pad 0 : f16[8, 16]
    %11 = mma %8, %10, %6 : f32[32, 16]
    yield %11
  }
  store $c, %4
}
)");
}

// An f32 mma that asks for TF32 tensor cores says so in the IR (and so in the JIT key); the
// default, exact f32, prints as before.
TEST(Printer, Tf32MmaSaysSo) {
  const auto trace = [](bool tf32) {
    return trace_kernel<Out<float>, In<float>, In<float>>(
        "gemm",
        {out_param("c", DType::F32, {16, 16}), in_param("a", DType::F32, 2),
         in_param("b", DType::F32, 2)},
        [tf32](Out<float> c, In<float> a, In<float> b) {
          auto x = load(a, {c.tile_index(0), 0}, {16, 8});
          auto y = load(b, {0, c.tile_index(1)}, {8, 16});
          auto acc = Tile<float>::zeros({16, 16});
          c.store(tf32 ? mma(x, y, acc, Precision::tf32) : mma(x, y, acc));
        });
  };
  const std::string with = promoted(trace(true)), without = promoted(trace(false));
  EXPECT_NE(with.find(" = mma %"), std::string::npos) << with;
  EXPECT_NE(with.find(" tf32 : f32[16, 16]"), std::string::npos) << with;
  EXPECT_EQ(without.find("tf32"), std::string::npos) << without;
}

// Before promotion the accumulator is a tracer-local variable: stored where it is made, loaded
// and stored inside the loop body (what TESSERA_DUMP=traced shows). The load happens where mma
// reads its operands, after the two tile loads made before it.
TEST(Printer, GemmAsTracedGolden) {
  EXPECT_EQ(
      ir::print(trace_gemm_in_statements()),
      R"(kernel @gemm($c: out f32 tile [32, 16], $a: in f16 rank 2, $b: in f16 rank 2) grid rank 2 {
  %0 = constant 0 : f32[32, 16]
  %1 = constant 0 : i32
  %2 = constant 4 : i32
  %3 = constant 1 : i32
  local_store var0, %0
  for %4 = %1 to %2 step %3 {
    %5 = tile_index 0 : i32
    %6 = load $a[%5, %4] pad 0 : f16[32, 8]
    %7 = tile_index 1 : i32
    %8 = load $b[%4, %7] pad 0 : f16[8, 16]
    %9 = local_load var0 : f32[32, 16]
    %10 = mma %6, %8, %9 : f32[32, 16]
    local_store var0, %10
    yield
  }
  %11 = local_load var0 : f32[32, 16]
  store $c, %11
}
)");
}

TEST(Printer, IfWithReassignmentGolden) {
  ir::Function f = trace_kernel<Out<float>, In<float>>(
      "branch", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
      [](Out<float> z, In<float> x) {
        auto v = load_like(x, z);
        if_(
            z.tile_index(0) == 0, [&] { v = v * 2.0f; }, [&] { v = -v; });
        z.store(v);
      });
  EXPECT_EQ(promoted(std::move(f)),
            R"(kernel @branch($z: out f32 tile [8], $x: in f32 rank 1) grid rank 1 {
  %0 = tile_index 0 : i32
  %1 = constant 0 : i32
  %2 = cmp_eq %0, %1 : bool
  %3 = tile_index 0 : i32
  %4 = load $x[%3] pad 0 : f32[8]
  %5 = if %2 -> (f32[8]) {
    %6 = constant 2 : f32
    %7 = reshape %6 : f32[1]
    %8 = broadcast %7 : f32[8]
    %9 = mul %4, %8 : f32[8]
    yield %9
  } else {
    %10 = neg %4 : f32[8]
    yield %10
  }
  store $z, %5
}
)");
}

TEST(Printer, NestedLoopsCarryingAnOuterVariableGolden) {
  ir::Function f = trace_kernel<Out<float>, In<float>>(
      "nested", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
      [](Out<float> z, In<float> x) {
        auto acc = Tile<float>::zeros({8});
        for_range(0, 3, [&](Index i) {
          for_range(0, 2, [&](Index j) { acc = acc + load(x, {i * 2 + j}, {8}); });
        });
        z.store(acc);
      });
  EXPECT_EQ(promoted(std::move(f)),
            R"(kernel @nested($z: out f32 tile [8], $x: in f32 rank 1) grid rank 1 {
  %0 = constant 0 : i32
  %1 = constant 3 : i32
  %2 = constant 1 : i32
  %3 = constant 0 : f32[8]
  %4 = for %5 = %0 to %1 step %2 carry(%6 = %3) -> (f32[8]) {
    %7 = constant 0 : i32
    %8 = constant 2 : i32
    %9 = constant 1 : i32
    %10 = for %11 = %7 to %8 step %9 carry(%12 = %6) -> (f32[8]) {
      %13 = constant 2 : i32
      %14 = mul %5, %13 : i32
      %15 = add %14, %11 : i32
      %16 = load $x[%15] pad 0 : f32[8]
      %17 = add %12, %16 : f32[8]
      yield %17
    }
    yield %10
  }
  store $z, %4
}
)");
}

TEST(Printer, ScalarParameterPrintAndUnpaddedLoadGolden) {
  ir::Function f = trace_kernel<Out<float>, Scalar<float>, In<float>>(
      "saxpy",
      {out_param("z", DType::F32, {16}), scalar_param("a", DType::F32),
       in_param("x", DType::F32, 1)},
      [](Out<float> z, Scalar<float> a, In<float> x) {
        print("tile {} of {}", z.tile_index(0), z.num_tiles(0));
        z.store(a * load_like(x, z, Pad::none()) + 0.5f);
      });
  EXPECT_EQ(promoted(std::move(f)),
            R"(kernel @saxpy($z: out f32 tile [16], $a: scalar f32, $x: in f32 rank 1) grid rank 1 {
  %0 = tile_index 0 : i32
  %1 = num_tiles 0 : i32
  print "tile {} of {}", %0, %1
  %2 = scalar_param $a : f32
  %3 = reshape %2 : f32[1]
  %4 = broadcast %3 : f32[16]
  %5 = tile_index 0 : i32
  %6 = load $x[%5] unpadded : f32[16]
  %7 = mul %4, %6 : f32[16]
  %8 = constant 0.5 : f32
  %9 = reshape %8 : f32[1]
  %10 = broadcast %9 : f32[16]
  %11 = add %7, %10 : f32[16]
  store $z, %11
}
)");
}

// Values are renumbered in program order, so the text does not depend on how passes allocated
// value ids: the same program built with different ids prints the same.
TEST(Printer, NumbersValuesInProgramOrderWhateverTheirIds) {
  ir::Function f = trace_gemm();
  analysis::promote_locals(f);
  ir::Function shifted = f;
  // Offset every id by 5 (and give the 5 unused ids a type) without changing the program.
  const ir::ValueId k = 5;
  shifted.values.insert(shifted.values.begin(), k, ir::Type{DType::I32, {}});
  std::function<void(ir::Block&)> shift = [&](ir::Block& b) {
    for (ir::ValueId& a : b.args) a += k;
    for (ir::Op& op : b.ops) {
      for (ir::ValueId& v : op.operands) v += k;
      for (ir::ValueId& v : op.results) v += k;
      for (ir::Block& r : op.regions) shift(r);
    }
  };
  shift(shifted.body);
  ASSERT_FALSE(ir::verify(shifted).has_value()) << ir::verify(shifted)->message;
  EXPECT_EQ(ir::print(shifted), ir::print(f));
}

}  // namespace

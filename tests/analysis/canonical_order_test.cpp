// canonical_order: the IR of a kernel does not depend on the order in which C++ evaluated the DSL
// calls that traced it. C++ leaves the order of call arguments and of most operands to the
// compiler (g++ goes right to left, clang left to right), so each test traces one kernel twice,
// its independent calls made in both orders as two compilers would, and requires one IR.
#include <gtest/gtest.h>

#include <tessera/tessera.hpp>

#include "tessera/analysis/canonical_order.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// What the compile pipeline does up to this pass, then the IR as text.
std::string canonical(ir::Function f) {
  analysis::promote_locals(f);
  analysis::canonical_order(f);
  if (auto d = ir::verify(f)) return "invalid after canonical_order: " + d->message;
  return ir::print(f);
}

const std::vector<ir::Param> kParams{out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1),
                                     in_param("y", DType::F32, 1)};
template <class F>
std::string traced_as(F&& body) {
  return canonical(
      trace_kernel<Out<float>, In<float>, In<float>>("k", kParams, std::forward<F>(body)));
}

TEST(CanonicalOrder, OperandsTracedInEitherOrderGiveOneIr) {
  // z.store(load_like(x, z) + load_like(y, z)), with the loads made right to left, then left to
  // right.
  const std::string right_to_left = traced_as([](Out<float> z, In<float> x, In<float> y) {
    auto b = load_like(y, z);
    auto a = load_like(x, z);
    z.store(a + b);
  });
  const std::string left_to_right = traced_as([](Out<float> z, In<float> x, In<float> y) {
    auto a = load_like(x, z);
    auto b = load_like(y, z);
    z.store(a + b);
  });
  EXPECT_EQ(right_to_left, left_to_right);
  // Operands come first to last, each right before its first use.
  EXPECT_EQ(left_to_right,
            R"(kernel @k($z: out f32 tile [8], $x: in f32 rank 1, $y: in f32 rank 1) grid rank 1 {
  %0 = tile_index 0 : i32
  %1 = load $x[%0] pad 0 : f32[8]
  %2 = tile_index 0 : i32
  %3 = load $y[%2] pad 0 : f32[8]
  %4 = add %1, %3 : f32[8]
  store $z, %4
}
)");
}

TEST(CanonicalOrder, LoopCarriedValuesDoNotDependOnWhichWasReadFirst) {
  // A variable gets its number when the tracer first sees it read inside a body; `a + b` reads a
  // and b in the compiler's order. The carried values must come out in one order all the same.
  const auto kernel = [](bool a_first) {
    return [a_first](Out<float> z, In<float> x, In<float>) {
      auto a = load_like(x, z);
      auto b = Tile<float>::zeros({8});
      for_range(0, 4, [&](Index) {
        Tile<float> ra = a_first ? a * 2.0f : b * 3.0f;  // the first read: a, or b
        Tile<float> rb = a_first ? b * 3.0f : a * 2.0f;
        if (!a_first) std::swap(ra, rb);
        a = ra + rb;
        b = rb - ra;
      });
      z.store(a + b);
    };
  };
  const std::string a_first = traced_as(kernel(true));
  const std::string b_first = traced_as(kernel(false));
  EXPECT_EQ(a_first, b_first);
  // a is carried first (it is assigned first), whichever variable the tracer numbered first.
  EXPECT_NE(a_first.find("carry(%9 = %4, %10 = %5)"), std::string::npos) << a_first;
  EXPECT_NE(a_first.find("%4 = load $x"), std::string::npos) << a_first;
}

TEST(CanonicalOrder, EffectsKeepTheirOrderAndPureOpsMoveToTheirFirstUse) {
  const std::string ir = traced_as([](Out<float> z, In<float> x, In<float>) {
    auto late = load_like(x, z) * 2.0f;  // used only by the store, after the print
    print("block {}", tile_index(0));
    z.store(late);
  });
  EXPECT_EQ(ir,
            R"(kernel @k($z: out f32 tile [8], $x: in f32 rank 1, $y: in f32 rank 1) grid rank 1 {
  %0 = tile_index 0 : i32
  print "block {}", %0
  %1 = tile_index 0 : i32
  %2 = load $x[%1] pad 0 : f32[8]
  %3 = constant 2 : f32
  %4 = reshape %3 : f32[1]
  %5 = broadcast %4 : f32[8]
  %6 = mul %2, %5 : f32[8]
  store $z, %6
}
)");
}

TEST(CanonicalOrder, ValuesAreNumberedInProgramOrder) {
  ir::Function f = trace_kernel<Out<float>, In<float>, In<float>>(
      "k", kParams, [](Out<float> z, In<float> x, In<float> y) {
        auto b = load_like(y, z);
        auto a = load_like(x, z);
        z.store(a + b);
      });
  analysis::promote_locals(f);
  analysis::canonical_order(f);
  ir::ValueId next = 0;
  for (const ir::Op& op : f.body.ops)
    for (ir::ValueId r : op.results) EXPECT_EQ(r, next++);
  EXPECT_EQ(f.values.size(), next);
}

}  // namespace
}  // namespace tessera::test

// A kernel that breaks a rule fails while it is traced, with a KernelError whose message starts
// with the user's file and line: the line of the offending call in this file, not a line inside
// Tessera. Each offending call sits on one line with __LINE__ (in at(__LINE__, ...)), so the
// expected line is computed, never written down.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "tessera/ir/printer.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

int g_line = 0;  // the line of the offending call, recorded by at()

// Runs f, noting that the call in it is on `line`.
template <class F>
void at(int line, F&& f) {
  g_line = line;
  f();
}

// Traces body(z, x) for k(z: out f32 tile [8], x: in f32 rank 1) and returns the message of the
// KernelError it throws; fails the test when it throws nothing.
template <class F>
std::string trace_error(F&& body) {
  g_line = 0;
  try {
    trace_kernel<Out<float>, In<float>>(
        "k", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
        std::forward<F>(body));
  } catch (const KernelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the kernel traced without an error";
  return "";
}

// The message is "<this file>:<line>:<column>: error: <rest>".
void expect_at(const std::string& message, int line, const std::string& rest) {
  ASSERT_NE(line, 0) << "at() never ran: the error came before the offending call";
  const std::string prefix = tessera::detail::cat(__FILE__, ":", line, ":");
  ASSERT_EQ(message.substr(0, prefix.size()), prefix) << message;
  const size_t error = message.find(": error: ", prefix.size());
  ASSERT_NE(error, std::string::npos) << message;
  const std::string column = message.substr(prefix.size(), error - prefix.size());
  EXPECT_FALSE(column.empty()) << message;
  EXPECT_EQ(column.find_first_not_of("0123456789"), std::string::npos) << message;
  EXPECT_EQ(message.substr(error + 9), rest);
}

TEST(SourceLine, BroadcastMismatch) {
  const std::string m = trace_error([](Out<float>, In<float>) {
    auto a = Tile<float>::zeros({4, 8});
    auto b = Tile<float>::zeros({4, 3});
    at(__LINE__, [&] { (void)(a + b); });
  });
  expect_at(m, g_line,
            "'add' cannot broadcast f32[4, 8] and f32[4, 3] together: axis 1 has extents 8 and 3");
}

TEST(SourceLine, SelectBroadcastMismatchNamesAllThreeOperands) {
  const std::string m = trace_error([](Out<float>, In<float>) {
    auto c = Tile<float>::zeros({4, 8}) > 0.0f;
    auto a = Tile<float>::zeros({4, 3});
    at(__LINE__, [&] { (void)select(c, a, a); });
  });
  expect_at(m, g_line,
            "'select' cannot broadcast bool[4, 8], f32[4, 3] and f32[4, 3] together: axis 1 has "
            "extents 8 and 3");
}

TEST(SourceLine, CompoundAssignmentBroadcastMismatch) {
  const std::string m = trace_error([](Out<float>, In<float>) {
    auto a = Tile<float>::zeros({8});
    auto b = Tile<float>::zeros({3});
    at(__LINE__, [&] { a += b; });
  });
  expect_at(m, g_line,
            "'add' cannot broadcast f32[8] and f32[3] together: axis 0 has extents 8 and 3");
}

TEST(SourceLine, StoreOfTheWrongTileShape) {
  const std::string m = trace_error([](Out<float> z, In<float>) {
    auto t = Tile<float>::zeros({4});
    at(__LINE__, [&] { z.store(t); });
  });
  expect_at(m, g_line, "store of a f32[4] tile to 'z', whose tiles are f32[8]");
}

TEST(SourceLine, LoadWithTheWrongNumberOfIndices) {
  const std::string m = trace_error([](Out<float>, In<float> x) {
    at(__LINE__, [&] { (void)load(x, {0, 1}, {8}); });
  });
  expect_at(m, g_line, "load from 'x' gives 2 tile indices, but the tensor has rank 1");
}

TEST(SourceLine, LoadLikeAnOutputOfAnotherRank) {
  std::string m;
  try {
    trace_kernel<Out<float>, In<float>>(
        "k", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 2)},
        [](Out<float> z, In<float> x) { at(__LINE__, [&] { (void)load_like(x, z); }); });
  } catch (const KernelError& e) {
    m = e.what();
  }
  expect_at(m, g_line, "load_like: the input has rank 2 but the output tile it follows has rank 1");
}

TEST(SourceLine, ReassigningALoopCarriedVariableWithAnotherShape) {
  const std::string m = trace_error([](Out<float>, In<float>) {
    auto acc = Tile<float>::zeros({8});
    for_range(0, 2, [&](Index) { at(__LINE__, [&] { acc = Tile<float>::zeros({4}); }); });
  });
  expect_at(m, g_line,
            "assigning a f32[4] tile to a variable that holds f32[8] tiles across a for_range or "
            "if_ body; a variable that a body reassigns keeps its shape and dtype");
}

TEST(SourceLine, ReassigningAVariableInAnIfWithAnotherShape) {
  const std::string m = trace_error([](Out<float> z, In<float> x) {
    auto v = load_like(x, z);
    if_(z.tile_index(0) == 0, [&] { at(__LINE__, [&] { v = sum(v, 0); }); });
  });
  expect_at(m, g_line,
            "assigning a f32[1] tile to a variable that holds f32[8] tiles across a for_range or "
            "if_ body; a variable that a body reassigns keeps its shape and dtype");
}

TEST(SourceLine, UsingATileMadeInALoopBodyAfterTheBody) {
  const std::string m = trace_error([](Out<float>, In<float> x) {
    std::vector<Tile<float>> rows;
    for_range(0, 2, [&](Index k) { rows.push_back(load(x, {k}, {8})); });
    at(__LINE__, [&] { (void)(rows[0] + 1.0f); });
  });
  expect_at(m, g_line,
            "a tile value made inside a for_range or if_ body is used after that body ended; "
            "declare the variable before the body and assign it inside");
}

TEST(SourceLine, ReduceAlongAnAxisPastTheRank) {
  const std::string m = trace_error([](Out<float>, In<float>) {
    auto t = Tile<float>::zeros({8});
    at(__LINE__, [&] { (void)sum(t, 3); });
  });
  expect_at(m, g_line, "reduce_sum along axis 3 of f32[8], which has rank 1");
}

TEST(SourceLine, MmaOfShapesThatDoNotChain) {
  const std::string m = trace_error([](Out<float>, In<float>) {
    auto a = Tile<half>::zeros({16, 8});
    auto b = Tile<half>::zeros({16, 16});
    auto acc = Tile<float>::zeros({16, 16});
    at(__LINE__, [&] { (void)mma(a, b, acc); });
  });
  expect_at(m, g_line,
            "mma shapes do not chain: a f16[16, 8] @ b f16[16, 16] does not give acc f32[16, 16]");
}

TEST(SourceLine, IfOnATileCondition) {
  const std::string m = trace_error([](Out<float> z, In<float> x) {
    auto v = load_like(x, z);
    at(__LINE__, [&] { if_(v > 0.0f, [] {}); });
  });
  expect_at(m, g_line, "if needs one bool scalar condition");
}

TEST(SourceLine, PrintOfAWholeTile) {
  const std::string m = trace_error([](Out<float> z, In<float> x) {
    auto v = load_like(x, z);
    at(__LINE__, [&] { print("v = {}", v); });
  });
  expect_at(m, g_line, "print takes scalars, not a f32[8] tile");
}

TEST(SourceLine, TileIndexPastTheGrid) {
  const std::string m =
      trace_error([](Out<float> z, In<float>) { at(__LINE__, [&] { (void)z.tile_index(1); }); });
  expect_at(m, g_line,
            "tile_index(1) is outside the grid, which has rank 1 (the rank of the kernel's Out "
            "partitions)");
}

TEST(SourceLine, ReshapeToAnotherElementCount) {
  const std::string m = trace_error([](Out<float>, In<float>) {
    auto t = Tile<float>::zeros({8});
    at(__LINE__, [&] { (void)t.reshape({3}); });
  });
  expect_at(m, g_line, "cannot reshape f32[8] (8 elements) to [3] (3 elements)");
}

// ---- outside a trace ------------------------------------------------------------------------

constexpr const char* kOutside =
    "a tile operation ran outside a kernel trace; tile values and tile functions exist only "
    "inside a TESSERA_KERNEL body";

template <class F>
std::string outside_error(F&& f) {
  try {
    f();
  } catch (const KernelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the tile operation ran outside a trace without an error";
  return "";
}

TEST(OutsideATrace, MakingATileThrows) {
  const std::string m = outside_error([] { at(__LINE__, [] { (void)Tile<float>::zeros({4}); }); });
  expect_at(m, g_line, kOutside);
}

TEST(OutsideATrace, TileIndexThrows) {
  const std::string m = outside_error([] { at(__LINE__, [] { (void)tile_index(0); }); });
  expect_at(m, g_line, kOutside);
}

TEST(OutsideATrace, LoadThrows) {
  const In<float> x(tile::detail::ParamTag{0});
  const std::string m = outside_error([&] { at(__LINE__, [&] { (void)load(x, {0}, {4}); }); });
  expect_at(m, g_line, kOutside);
}

TEST(OutsideATrace, ATileKeptFromATraceCannotBeUsedLater) {
  std::optional<Tile<float>> kept;
  trace_kernel<Out<float>, In<float>>(
      "k", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
      [&](Out<float> z, In<float> x) {
        kept.emplace(load_like(x, z));
        z.store(*kept);
      });
  const std::string m = outside_error([&] { at(__LINE__, [&] { (void)(*kept * 2.0f); }); });
  expect_at(m, g_line, kOutside);
}

// The twin of every case above: the same shapes of code, used correctly, trace without error.
TEST(SourceLine, CorrectKernelTracesWithoutError) {
  auto correct = [] {
    trace_kernel<Out<float>, In<float>>(
        "k", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
        [](Out<float> z, In<float> x) {
          auto acc = Tile<float>::zeros({8});
          acc += Tile<float>::zeros({1}) + Tile<float>::zeros({8});
          for_range(0, 2, [&](Index k) { acc = acc + load(x, {k}, {8}); });
          if_(z.tile_index(0) == 0, [&] { acc = acc * sum(acc, 0); });
          print("block {}", z.tile_index(0));
          z.store(acc + mma(Tile<half>::zeros({8, 4}), Tile<half>::zeros({4, 1}),
                            Tile<float>::zeros({8, 1}))
                            .reshape({8}));
        });
  };
  EXPECT_NO_THROW(correct());
}

// ---- numerics ----------------------------------------------------------------------------------

TEST(Numerics, KernelsAreExactUnlessTheyAskForFast) {
  auto body = [](Out<float> z, In<float> x) { z.store(exp(load_like(x, z))); };
  const auto params = std::vector{out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)};
  const ir::Function plain = trace_kernel<Out<float>, In<float>>("k", params, body);
  EXPECT_EQ(plain.numerics, ir::Numerics::exact);
  EXPECT_EQ(ir::print(plain).find("numerics"), std::string::npos) << ir::print(plain);

  const ir::Function fast =
      trace_kernel<Out<float>, In<float>>("k", params, [&](Out<float> z, In<float> x) {
        body(z, x);
        numerics(Numerics::fast);  // applies to the whole kernel, wherever it is said
      });
  EXPECT_EQ(fast.numerics, ir::Numerics::fast);
  EXPECT_NE(ir::print(fast).find("grid rank 1 numerics fast {"), std::string::npos)
      << ir::print(fast);
}

TEST(Numerics, SayingTheSamePolicyTwiceIsFine) {
  const ir::Function f = trace_kernel<Out<float>, In<float>>(
      "k", {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1)},
      [](Out<float> z, In<float> x) {
        numerics(Numerics::fast);
        z.store(load_like(x, z));
        numerics(Numerics::fast);
      });
  EXPECT_EQ(f.numerics, ir::Numerics::fast);
}

TEST(SourceLine, TwoDifferentNumericsPolicies) {
  int first = 0;
  const std::string m = trace_error([&](Out<float> z, In<float> x) {
    first = __LINE__ + 1;
    numerics(Numerics::fast);
    z.store(load_like(x, z));
    at(__LINE__, [&] { numerics(Numerics::exact); });
  });
  const std::string here = tessera::detail::cat(__FILE__, ":", g_line, ":");
  EXPECT_EQ(m.substr(0, here.size()), here) << m;
  EXPECT_NE(m.find(tessera::detail::cat("error: kernel 'k' asks for numerics exact here, but ",
                                        __FILE__, ":", first, ":")),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(" already set fast: a kernel has one numerics policy (it applies to the whole "
                   "kernel)"),
            std::string::npos)
      << m;
}

// prefetch: an In parameter only (an Out is written by this kernel's own blocks), and only in the
// kernel's body, where the CUDA backend issues it: before the wait for the kernel before it.
TEST(SourceLine, PrefetchOfAnOut) {
  const std::string m = trace_error([](Out<float> z, In<float>) {  //
    at(__LINE__, [&] { prefetch(z); });
  });
  expect_at(m, g_line,
            "prefetch of 'z', which is an Out parameter; only an In parameter, which no block "
            "writes, may be fetched before the kernels before this one have finished");
}

TEST(SourceLine, PrefetchInALoopOrABranch) {
  const std::string loop = trace_error([](Out<float> z, In<float> x) {
    for_range(0, 2, [&](Index) { at(__LINE__, [&] { prefetch(x); }); });
    z.store(load_like(x, z));
  });
  const std::string rest =
      "prefetch of 'x' inside a for_range or if_ body; call it in the kernel's body, outside loops "
      "and branches (it warms the cache for the whole kernel)";
  expect_at(loop, g_line, rest);
  const std::string branch = trace_error([](Out<float> z, In<float> x) {
    if_(tile_index(0) == 0, [&] { at(__LINE__, [&] { prefetch(x); }); });
    z.store(load_like(x, z));
  });
  expect_at(branch, g_line, rest);
}

TEST(SourceLine, NumericsOutsideAKernel) {
  try {
    numerics(Numerics::fast);
    ADD_FAILURE() << "numerics() outside a trace did not throw";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("outside a kernel trace"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessera::test

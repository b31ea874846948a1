// The typing rules of the math, reduction and scan ops: each misuse fails while the kernel is
// traced, with a KernelError at the user's line whose message names the op, the operand's type
// and the remedy; each has a twin, the intended use, that traces.
#include <gtest/gtest.h>

#include <string>

#include <tessera/tessera.hpp>

#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

int g_line = 0;  // the line of the offending call, recorded by at()

// Runs f, noting that the call in it is on `line` (written on one line with __LINE__, so the
// expected line is computed, never written down).
template <class F>
void at(int line, F&& f) {
  g_line = line;
  f();
}

// Traces body(z, x, i) for k(z: out f32 tile [8], x: in f32 rank 1, i: in i32 rank 1) and returns
// the message of the KernelError it throws ("" and a failure when it throws nothing).
template <class F>
std::string trace_error(F&& body) {
  try {
    trace_kernel<Out<float>, In<float>, In<int32_t>>(
        "k",
        {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1),
         in_param("i", DType::I32, 1)},
        std::forward<F>(body));
  } catch (const KernelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "the kernel traced without an error";
  return "";
}
// The twin: body traces (and stores a tile of z).
template <class F>
void expect_traces(F&& body) {
  const auto trace = [&] {
    trace_kernel<Out<float>, In<float>, In<int32_t>>(
        "k",
        {out_param("z", DType::F32, {8}), in_param("x", DType::F32, 1),
         in_param("i", DType::I32, 1)},
        std::forward<F>(body));
  };
  EXPECT_NO_THROW(trace());
}

// "<this file>:<g_line>:<column>: error: <rest>".
void expect_error(const std::string& message, const std::string& rest) {
  const std::string prefix = tessera::detail::cat(__FILE__, ":", g_line, ":");
  EXPECT_EQ(message.substr(0, prefix.size()), prefix) << message;
  const size_t at = message.find("error: ");
  EXPECT_EQ(at == std::string::npos ? message : message.substr(at + 7), rest);
}

TEST(OpRules, FmodOfIntegersNamesTheIntegerRemainder) {
  expect_error(trace_error([](Out<float> z, In<float>, In<int32_t> i) {
                 auto t = load_like(i, z);
                 at(__LINE__, [&] { (void)fmod(t, t); });
               }),
               "fmod needs floating-point tiles, not i32[8]; cast them first (or use % on "
               "integers)");
  expect_traces([](Out<float> z, In<float>, In<int32_t> i) {
    auto t = load_like(i, z);
    z.store((t % 3).cast<float>() + fmod(t.cast<float>(), 3.0f));
  });
}

TEST(OpRules, RemainderOfFloatsNamesFmod) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto t = load_like(x, z);
                 at(__LINE__, [&] { (void)(t % t); });
               }),
               "rem needs integer tiles, not f32[8]; use fmod(a, b) for floats");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    auto t = load_like(x, z);
    z.store(fmod(t, t));
  });
}

TEST(OpRules, ShiftOfFloatsIsRejected) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto t = load_like(x, z);
                 at(__LINE__, [&] { (void)(t << 2.0f); });
               }),
               "shl needs integer tiles, not f32[8]");
  expect_traces([](Out<float> z, In<float>, In<int32_t> i) {
    auto t = load_like(i, z);
    z.store(((t << 2) >> 1).cast<float>());
  });
}

TEST(OpRules, BitwiseNotOfFloatsIsRejected) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto t = load_like(x, z);
                 at(__LINE__, [&] { (void)~t; });
               }),
               "not needs a bool or integer tile (logical or bitwise), not f32[8]");
  expect_traces([](Out<float> z, In<float> x, In<int32_t> i) {
    z.store((~load_like(i, z)).cast<float>() +
            select(~(load_like(x, z) > 0.0f), Tile<float>::full({}, 1.0f), 2.0f));
  });
}

TEST(OpRules, IsNanOfIntegersSaysIntegersAreNeverNan) {
  expect_error(trace_error([](Out<float> z, In<float>, In<int32_t> i) {
                 auto t = load_like(i, z);
                 at(__LINE__, [&] { (void)isnan(t); });
               }),
               "isnan needs a floating-point tile, not i32[8] (an integer is never NaN or "
               "infinite)");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    z.store((isnan(load_like(x, z)) | isinf(load_like(x, z))).cast<float>());
  });
}

TEST(OpRules, MathOfIntegersAsksForACast) {
  expect_error(trace_error([](Out<float> z, In<float>, In<int32_t> i) {
                 auto t = load_like(i, z);
                 at(__LINE__, [&] { (void)exp2(t); });
               }),
               "exp2 needs a floating-point tile, not i32[8]; cast it first");
  expect_traces(
      [](Out<float> z, In<float>, In<int32_t> i) { z.store(exp2(load_like(i, z).cast<float>())); });
}

TEST(OpRules, AnyOfNumbersAsksForAComparison) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto t = load_like(x, z);
                 at(__LINE__, [&] { (void)any(t, 0); });
               }),
               "reduce_any needs a bool tile, not f32[8]; compare first (x != 0)");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    auto t = load_like(x, z);
    z.store(broadcast((any(t != 0.0f, 0) & all(t > -1.0f, 0)).cast<float>(), {8}));
  });
}

TEST(OpRules, ArgmaxOfBoolsIsRejected) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto t = load_like(x, z) > 0.0f;
                 at(__LINE__, [&] { (void)argmax(t, 0); });
               }),
               "argmax needs numbers, not bool");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    auto t = load_like(x, z);
    z.store(broadcast((argmax(t, 0) + argmin(t, -1)).cast<float>(), {8}));
  });
}

TEST(OpRules, ScanAlongAMissingAxisNamesTheRank) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto t = load_like(x, z);
                 at(__LINE__, [&] { (void)cumsum(t, 1); });
               }),
               "cumsum along axis 1 of f32[8], which has rank 1");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    auto t = load_like(x, z);
    z.store(cumsum(t, 0) + cumprod(t, -1, Scan::exclusive));
  });
}

TEST(OpRules, FmaOfBoolsIsRejected) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto b = load_like(x, z) > 0.0f;
                 at(__LINE__, [&] { (void)fma(b, b, b); });
               }),
               "fma needs numbers, not bool");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    auto t = load_like(x, z);
    z.store(fma(t, t, Tile<float>::full({}, 1.0f)) + clamp(t, -1.0f, 1.0f));
  });
}

TEST(OpRules, StorePartLargerThanTheTileIsRejected) {
  expect_error(trace_error([](Out<float> z, In<float> x, In<int32_t>) {
                 auto t = load_at(x, {0}, {16});
                 at(__LINE__, [&] { z.store_part(t, {0}); });
               }),
               "store_part of a f32[16] piece to 'z', whose tiles are f32[8]: the piece is larger "
               "than the tile along axis 0; a block writes only its own tile");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    for_range(0, 2, [&](Index c) { z.store_part(load_at(x, {c * 4}, {4}), {c * 4}); });
  });
}

TEST(OpRules, SlicePastTheTileNamesItsRangeAndTheExtent) {
  expect_error(trace_error([](Out<float>, In<float> x, In<int32_t>) {
                 auto t = load_at(x, {0}, {16});
                 at(__LINE__, [&] { (void)t.slice(0, 12, 8); });
               }),
               "slice [12, 12 + 8) along axis 0 of a f32[16] tile is outside its extent 16; take "
               "0 <= start and 0 < length <= 16 - start");
  expect_error(trace_error([](Out<float>, In<float> x, In<int32_t>) {
                 auto t = load_at(x, {0}, {16});
                 at(__LINE__, [&] { (void)t.slice(0, -1, 8); });
               }),
               "slice [-1, -1 + 8) along axis 0 of a f32[16] tile is outside its extent 16; take "
               "0 <= start and 0 < length <= 16 - start");
  expect_error(trace_error([](Out<float>, In<float> x, In<int32_t>) {
                 auto t = load_at(x, {0}, {16});
                 at(__LINE__, [&] { (void)t.slice(1, 0, 8); });
               }),
               "slice along axis 1 of f32[16], which has rank 1");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    z.store(load_at(x, {0}, {16}).slice(0, 8, 8));
  });
}

TEST(OpRules, ConcatOfMismatchedTilesNamesBoth) {
  expect_error(trace_error([](Out<float>, In<float> x, In<int32_t>) {
                 auto a = load_at(x, {0}, {4}).reshape({2, 2});
                 auto b = load_at(x, {0}, {6}).reshape({2, 3});
                 at(__LINE__, [&] { (void)concat({a, b}, 0); });
               }),
               "concat along axis 0 of a f32[2, 2] and a f32[2, 3] tile; the tiles need one dtype "
               "and one extent on every other axis");
  expect_traces([](Out<float> z, In<float> x, In<int32_t>) {
    auto a = load_at(x, {0}, {4}).reshape({2, 2});
    auto b = load_at(x, {0}, {6}).reshape({2, 3});
    z.store(concat({a, b, Tile<float>::zeros({2, 1})}, -1).reshape({12}).slice(0, 4, 8));
  });
}

TEST(OpRules, GatherNeedsOneIndexPerRow) {
  expect_error(trace_error([](Out<float>, In<float> x, In<int32_t> i) {
                 auto rows = load_at(i, {0}, {4});
                 at(__LINE__, [&] { (void)gather(x, rows, {}, {8}); });
               }),
               "gather from 'x' takes its rows from an i32[8] tile (one index per row of the [8] "
               "result), not i32[4]; reshape or cast the indices first");
  expect_traces([](Out<float> z, In<float> x, In<int32_t> i) {
    z.store(gather(x, load_like(i, z), {}, {8}));
  });
}

TEST(OpRules, LoadTransposedOfARank1TensorIsRejected) {
  expect_error(trace_error([](Out<float>, In<float> x, In<int32_t>) {
                 at(__LINE__, [&] { (void)load_t(x, {0}, {8}); });
               }),
               "load_t swaps the last two axes, so it needs a tensor and a tile of rank 2 or "
               "more, not rank 1; use load for rank 1");
  EXPECT_NO_THROW((trace_kernel<Out<float>, In<float>>(
      "k", {out_param("z", DType::F32, {8, 4}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) {
        z.store(load_t(x, {1, 0}, {8, 4}));
      })));
}

TEST(OpRules, ArithmeticOnAnFp8TileAsksForACast) {
  std::string message;
  try {
    trace_kernel<Out<float>, In<float8_e4m3>>(
        "k", {out_param("z", DType::F32, {8}), in_param("x", DType::F8E4M3, 1)},
        [](Out<float>, In<float8_e4m3> x) {
          const Tile<float8_e4m3> t = load(x, {0}, {8});
          at(__LINE__, [&] { (void)(t + t); });
        });
  } catch (const KernelError& e) {
    message = e.what();
  }
  expect_error(message,
               "add of a f8e4m3[8] tile: f8e4m3 is a storage type with no arithmetic; cast it "
               "to f16 or f32 first (x.cast<float>()), and cast the result back to store it");
  EXPECT_NO_THROW((trace_kernel<Out<float8_e4m3>, In<float8_e4m3>>(
      "k", {out_param("z", DType::F8E4M3, {8}), in_param("x", DType::F8E4M3, 1)},
      [](Out<float8_e4m3> z, In<float8_e4m3> x) {
        const Tile<float> t = load(x, {0}, {8}).cast<float>();
        z.store((t + t).cast<float8_e4m3>());
      })));
}

}  // namespace
}  // namespace tessera::test

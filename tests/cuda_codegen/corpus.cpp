#include "corpus.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <tessera/tessera.hpp>

#include "tessera/analysis/dce.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// ---- elementwise -------------------------------------------------------------------------------

template <Element T>
ir::Function add(int64_t tile) {
  const DType d = dtype_v<T>;
  return trace_kernel<Out<T>, In<T>, In<T>>(
      "add", {out_param("z", d, {tile}), in_param("x", d, 1), in_param("y", d, 1)},
      [](Out<T> z, In<T> x, In<T> y) { z.store(load_like(x, z) + load_like(y, z)); });
}

ir::Function saxpy() {
  return trace_kernel<Out<float>, In<float>, In<float>, Scalar<float>>(
      "saxpy",
      {out_param("z", DType::F32, {1024}), in_param("x", DType::F32, 1),
       in_param("y", DType::F32, 1), scalar_param("a", DType::F32)},
      [](Out<float> z, In<float> x, In<float> y, Scalar<float> a) {
        z.store(a * load_like(x, z) + load_like(y, z));
      });
}

// Every float unary and binary op, compares, select and the bool ops, on a 3-D grid.
ir::Function float_math() {
  return trace_kernel<Out<float>, In<float>, In<float>>(
      "float_math",
      {out_param("z", DType::F32, {2, 4, 32}), in_param("x", DType::F32, 3),
       in_param("y", DType::F32, 3)},
      [](Out<float> z, In<float> x, In<float> y) {
        auto a = load_like(x, z), b = load_like(y, z, Pad::value_of(1));
        auto u = exp(a) + log(abs(b)) - sqrt(abs(a)) * rsqrt(abs(b) + 1.0f);
        auto v = tanh(u) / (sin(a) + 2.0f) + cos(b) + (-a);
        auto big = ((a > b) & !(a == b)) | (a <= 0.5f);
        auto w = select(big, maximum(u, v), minimum(u, v));
        auto c = select((w != w) | (w < -1.0f) | (w >= 1.0f), a, w);
        z.store(c);
      });
}

// The float math of exp2 ... trunc, the NaN / inf tests, pow fmod copysign, fma and clamp, in
// f32, f16 (computed in f32, rounded once) and f64.
ir::Function float_math_more() {
  return trace_kernel<Out<float>, In<float>, In<half>, In<double>>(
      "float_math_more",
      {out_param("z", DType::F32, {4, 64}), in_param("x", DType::F32, 2),
       in_param("h", DType::F16, 2), in_param("d", DType::F64, 2)},
      [](Out<float> z, In<float> x, In<half> h, In<double> d) {
        auto a = load_like(x, z);
        auto u = exp2(a) + log2(abs(a) + 1.0f) + log1p(abs(a)) + expm1(a) + erf(a) + sigmoid(a);
        auto r = floor(u) + ceil(u) + round(u) + trunc(u);
        auto p = pow(abs(a), 1.5f) + fmod(r, 3.0f) + copysign(u, a) + fma(a, u, r);
        auto c = clamp(p, -4.0f, 4.0f);
        auto bad = isnan(c) | isinf(u);
        auto hv = load_like(h, z);
        auto hs = fma(hv, hv, sigmoid(hv)) + pow(abs(hv), hv) + clamp(hv, hv, hv);
        auto dv = load_like(d, z);
        auto ds = fma(dv, exp2(dv), erf(dv)) + fmod(dv, 2.0) + round(dv);
        z.store(select(bad | isnan(ds), hs.cast<float>(), c + ds.cast<float>()));
      });
}

// % << >> ^ ~, fma and clamp on i32, i8 (computed as int, wrapped on assignment) and i64.
ir::Function integer_math_more() {
  return trace_kernel<Out<int32_t>, In<int32_t>, In<int8_t>, In<int64_t>>(
      "integer_math_more",
      {out_param("z", DType::I32, {512}), in_param("x", DType::I32, 1), in_param("b", DType::I8, 1),
       in_param("l", DType::I64, 1)},
      [](Out<int32_t> z, In<int32_t> x, In<int8_t> b, In<int64_t> l) {
        auto a = load_like(x, z);
        auto i = (a % 7) + (a << 3) + (a >> (a & 31)) + (a ^ ~a) + fma(a, a, a) + clamp(a, -5, 5);
        auto bv = load_like(b, z);
        auto i8 = (bv % bv) + (bv << 2) + (bv >> bv) + (~bv ^ bv) + clamp(bv, bv, bv);
        auto lv = load_like(l, z);
        auto i64 = (lv % 3) + (lv << lv) + (lv >> 5) + (~lv) + fma(lv, lv, lv);
        z.store(i + i8.cast<int32_t>() + i64.cast<int32_t>());
      });
}

// Integer arithmetic of every width, wrapping, and casts between all dtypes.
ir::Function integer_math() {
  return trace_kernel<Out<int32_t>, In<int32_t>, In<int32_t>>(
      "integer_math",
      {out_param("z", DType::I32, {256}), in_param("x", DType::I32, 1),
       in_param("y", DType::I32, 1)},
      [](Out<int32_t> z, In<int32_t> x, In<int32_t> y) {
        auto a = load_like(x, z), b = load_like(y, z);
        auto i32 =
            (a + b) * (a - b) / b + maximum(a, b) - minimum(a, b) + abs(-a) + (a & b) + (a | b);
        auto i8 = a.cast<int8_t>() * b.cast<int8_t>() / a.cast<int8_t>();
        auto i16 = a.cast<int16_t>() - b.cast<int16_t>();
        auto u8 = a.cast<uint8_t>() + b.cast<uint8_t>();
        auto i64 = a.cast<int64_t>() * b.cast<int64_t>() / (b.cast<int64_t>() + int64_t{1});
        auto sum = i32 + i8.cast<int32_t>() + i16.cast<int32_t>() + u8.cast<int32_t>() +
                   i64.cast<int32_t>();
        z.store(select(a < b, sum, a.cast<bool>().cast<int32_t>()));
      });
}

// Casts between every pair of (non-bool) dtypes through f32, and f16/bf16 arithmetic.
ir::Function casts() {
  return trace_kernel<Out<half>, In<float>, In<bfloat16>>(
      "casts",
      {out_param("z", DType::F16, {512}), in_param("x", DType::F32, 1),
       in_param("y", DType::BF16, 1)},
      [](Out<half> z, In<float> x, In<bfloat16> y) {
        auto a = load_like(x, z);
        auto b = load_like(y, z);
        auto t = a.cast<int8_t>().cast<float>() + a.cast<int16_t>().cast<float>() +
                 a.cast<int32_t>().cast<float>() + a.cast<int64_t>().cast<float>() +
                 a.cast<uint8_t>().cast<float>() + a.cast<double>().cast<float>() +
                 a.cast<half>().cast<float>() + a.cast<bool>().cast<float>();
        auto h = t.cast<half>() * b.cast<half>() + exp(b).cast<half>();
        auto d = h.cast<double>() / a.cast<double>();
        z.store(d.cast<half>() - b.cast<half>());
      });
}

// ---- shapes ------------------------------------------------------------------------------------

// iota, transpose (a gather through shared memory), reshape, and broadcasts that are free and
// that are not.
ir::Function shapes() {
  return trace_kernel<Out<float>, In<float>, In<float>>(
      "shapes",
      {out_param("z", DType::F32, {16, 32}), in_param("x", DType::F32, 2),
       in_param("col", DType::F32, 2)},
      [](Out<float> z, In<float> x, In<float> col) {
        auto t = load(x, {z.tile_index(1), z.tile_index(0)}, {32, 16}).transpose();
        auto i = iota<float>({16, 32}, 0) * 100.0f + iota<int32_t>({16, 32}, 1).cast<float>();
        auto c = load(col, {z.tile_index(0), 0}, {16, 1});  // [16, 1] -> [16, 32]: not free
        auto r = load(x, {0, z.tile_index(1)}, {1, 32});    // [1, 32] -> [16, 32]
        auto flat = (t + i + c + r).reshape({512}).reshape({16, 32});
        z.store(flat.permute({0, 1}));
      });
}

// ---- reductions --------------------------------------------------------------------------------

// One row of 4096 f16 per tile: the row spans the whole block (shuffles, then shared memory).
ir::Function softmax_f16() {
  return trace_kernel<Out<half>, In<half>>(
      "softmax_f16", {out_param("z", DType::F16, {1, 4096}), in_param("x", DType::F16, 2)},
      [](Out<half> z, In<half> x) {
        auto t = load_like(x, z, Pad::neg_inf()).cast<float>();
        auto e = exp(t - max(t, 1));
        z.store((e / sum(e, 1)).cast<half>());
      });
}

// Rows of 256 f32, eight per tile: each row is held by a group of threads within a warp.
ir::Function softmax_rows() {
  return trace_kernel<Out<float>, In<float>>(
      "softmax_rows", {out_param("z", DType::F32, {8, 256}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) {
        auto t = load_like(x, z, Pad::neg_inf());
        auto e = exp(t - max(t, 1));
        z.store(e / sum(e, 1));
      });
}

ir::Function rmsnorm_f16() {
  return trace_kernel<Out<half>, In<half>, In<half>, Scalar<float>>(
      "rmsnorm_f16",
      {out_param("z", DType::F16, {4, 1024}), in_param("x", DType::F16, 2),
       in_param("w", DType::F16, 1), scalar_param("eps", DType::F32)},
      [](Out<half> z, In<half> x, In<half> w, Scalar<float> eps) {
        auto t = load_like(x, z).cast<float>();
        auto ms = sum(t * t, 1) / 1024.0f;
        auto wt = load(w, {0}, {1024}).cast<float>();  // broadcast over the rows: free
        z.store((t * rsqrt(ms + eps) * wt).cast<half>());
      });
}

// Reductions that take the shared-memory path: along axis 0, and of rows that are not a power of
// two of vectors; integer and f64 reductions.
ir::Function reduce_fallback() {
  return trace_kernel<Out<float>, In<float>, In<int8_t>, In<double>>(
      "reduce_fallback",
      {out_param("z", DType::F32, {1, 24}), in_param("x", DType::F32, 2),
       in_param("i", DType::I8, 2), in_param("d", DType::F64, 2)},
      [](Out<float> z, In<float> x, In<int8_t> i, In<double> d) {
        auto t = load(x, {0, z.tile_index(1)}, {40, 24});
        auto cols = sum(t, 0) + max(t, 0) - min(t, 0);  // [1, 24]
        auto rows = max(t, 1);                          // [40, 1], 24 = 6 vectors
        auto r = sum(rows, 0);                          // [1, 1]
        auto n = sum(load(i, {0, z.tile_index(1)}, {40, 24}), 0).cast<float>();  // i8 sums wrap
        auto m = min(load(d, {0, z.tile_index(1)}, {40, 24}), 0).cast<float>();
        z.store(cols + r + n + m);
      });
}

// prod, any and all on the fast path (rows of 256) and the shared-memory one (axis 0); argmax and
// argmin, cumsum and cumprod (inclusive and exclusive) along either axis.
ir::Function reduce_more() {
  return trace_kernel<Out<float>, In<float>, In<int32_t>>(
      "reduce_more",
      {out_param("z", DType::F32, {8, 256}), in_param("x", DType::F32, 2),
       in_param("n", DType::I32, 2)},
      [](Out<float> z, In<float> x, In<int32_t> n) {
        auto t = load_like(x, z, Pad::value_of(1));
        auto p = prod(t, 1) + prod(t, 0);                                        // [8, 256]
        auto flags = (any(t > 2.0f, 1) & all(t > -2.0f, 1)) | any(t < 0.0f, 0);  // [8, 256]
        auto best = argmax(t, 1) + argmin(t, 0);                                 // [8, 256]
        auto s = cumsum(t, 1) + cumprod(t, 0, Scan::exclusive);
        auto k = load_like(n, z);
        auto ks = cumsum(k, 0, Scan::exclusive) + cumprod(k, 1) + argmax(k, 0) + prod(k, 1);
        z.store(select(flags, p + s, best.cast<float>() + ks.cast<float>()));
      });
}

// ---- mma ---------------------------------------------------------------------------------------

// `prefetch_b`: the kernel starts with prefetch(b) (the pipelined lowering keeps it).
template <Element In_, Element Acc>
ir::Function gemm(const char* name, int64_t bm, int64_t bn, int64_t bk, bool prefetch_b = false) {
  const DType in = dtype_v<In_>, acc = dtype_v<Acc>;
  return trace_kernel<Out<Acc>, In<In_>, In<In_>>(
      name, {out_param("c", acc, {bm, bn}), in_param("a", in, 2), in_param("b", in, 2)},
      [bm, bn, bk, prefetch_b](Out<Acc> c, In<In_> a, In<In_> b) {
        if (prefetch_b) prefetch(b);
        auto accum = Tile<Acc>::zeros({bm, bn});
        const Index k_tiles = ((a.dim(1) + (bk - 1)) / bk).template cast<int32_t>();
        for_range(0, k_tiles, [&](Index k) {
          accum = mma(load(a, {c.tile_index(0), k}, {bm, bk}),
                      load(b, {k, c.tile_index(1)}, {bk, bn}), accum);
        });
        c.store(accum);
      });
}

// A decode-shaped matvec as kernels/src/linear.cpp writes it: each block owns 8 rows of w and walks
// K in chunks, its weights prefetched (twice: emitted once) and x not.
ir::Function matvec_prefetch() {
  return trace_kernel<Out<half>, In<half>, In<half>>(
      "matvec_prefetch",
      {out_param("y", DType::F16, {1, 8}), in_param("x", DType::F16, 2),
       in_param("w", DType::F16, 2)},
      [](Out<half> y, In<half> x, In<half> w) {
        prefetch(w);
        prefetch(w);
        const Index m = tile_index(0), j = tile_index(1);
        Tile<float> acc = Tile<float>::zeros({8, 1});
        const Index chunks = ((x.dim(1) + 255) / 256).template cast<int32_t>();
        for_range(0, chunks, [&](Index k) {
          acc = acc + sum(load(w, {j, k}, {8, 256}).template cast<float>() *
                              load(x, {m, k}, {1, 256}).template cast<float>(),
                          1);
        });
        y.store(acc.reshape({1, 8}).template cast<half>());
      });
}

// The f32 GEMM on TF32 tensor cores, as the user asks for it (Precision::tf32).
ir::Function gemm_tf32() {
  return trace_kernel<Out<float>, In<float>, In<float>>(
      "gemm_tf32",
      {out_param("c", DType::F32, {64, 64}), in_param("a", DType::F32, 2),
       in_param("b", DType::F32, 2)},
      [](Out<float> c, In<float> a, In<float> b) {
        auto accum = Tile<float>::zeros({64, 64});
        const Index k_tiles = ((a.dim(1) + 31) / 32).template cast<int32_t>();
        for_range(0, k_tiles, [&](Index k) {
          accum = mma(load(a, {c.tile_index(0), k}, {64, 32}),
                      load(b, {k, c.tile_index(1)}, {32, 64}), accum, Precision::tf32);
        });
        c.store(accum);
      });
}

// The GEMM with a fused epilogue: bias (a broadcast row), relu, a cast to the output's f16/bf16.
template <Element T>
ir::Function gemm_epilogue(const char* name, int64_t bm, int64_t bn, int64_t bk) {
  const DType t = dtype_v<T>;
  return trace_kernel<Out<T>, In<T>, In<T>, In<float>>(
      name,
      {out_param("c", t, {bm, bn}), in_param("a", t, 2), in_param("b", t, 2),
       in_param("bias", DType::F32, 2)},
      [bm, bn, bk](Out<T> c, In<T> a, In<T> b, In<float> bias) {
        auto accum = Tile<float>::zeros({bm, bn});
        const Index k_tiles = ((a.dim(1) + (bk - 1)) / bk).template cast<int32_t>();
        for_range(0, k_tiles, [&](Index k) {
          accum = mma(load(a, {c.tile_index(0), k}, {bm, bk}),
                      load(b, {k, c.tile_index(1)}, {bk, bn}), accum);
        });
        auto row = load(bias, {0, c.tile_index(1)}, {1, bn});
        c.store(maximum(accum + broadcast(row, {bm, bn}), 0.0f).template cast<T>());
      });
}

// An mma whose operands are computed (staged from registers) and whose result feeds elementwise
// ops and a reduction (converted out of the accumulator layout).
ir::Function mma_epilogue() {
  return trace_kernel<Out<float>, In<half>, In<half>, In<float>>(
      "mma_epilogue",
      {out_param("c", DType::F32, {32, 24}), in_param("a", DType::F16, 2),
       in_param("b", DType::F16, 2), in_param("bias", DType::F32, 2)},
      [](Out<float> c, In<half> a, In<half> b, In<float> bias) {
        auto x = load(a, {c.tile_index(0), 0}, {32, 20});
        auto y = load(b, {0, c.tile_index(1)}, {20, 24});
        auto acc = mma(x * x, y, Tile<float>::full({32, 24}, 1.0f));
        auto biased = acc * 0.5f + load_like(bias, c);
        c.store(biased - max(biased, 1));
      });
}

// ---- control flow and the interface ------------------------------------------------------------

ir::Function control() {
  return trace_kernel<Out<float>, In<float>, Scalar<int32_t>, Scalar<half>, Scalar<bool>,
                      Scalar<int64_t>>(
      "control",
      {out_param("z", DType::F32, {8, 64}), in_param("x", DType::F32, 2),
       scalar_param("n", DType::I32), scalar_param("h", DType::F16),
       scalar_param("flag", DType::Bool), scalar_param("big", DType::I64)},
      [](Out<float> z, In<float> x, Scalar<int32_t> n, Scalar<half> h, Scalar<bool> flag,
         Scalar<int64_t> big) {
        auto acc = Tile<float>::zeros({8, 64});
        auto count = Tile<int32_t>::zeros({});
        for_range(0, n, 2, [&](Index k) {
          auto t = load(x, {z.tile_index(0), k}, {8, 64});
          if_(
              k < z.num_tiles(1), [&] { acc = acc + t; }, [&] { acc = acc - t; });
          count = count + 1;
        });
        auto total = sum(sum(acc, 1), 0).reshape({});  // a single element, made uniform
        if_(flag & (total > 0.0f), [&] {
          print("tile {} of {}: total {} after {} steps, h {}, big {}, dim {}", z.tile_index(0),
                z.num_tiles(0), total, count, h, big, x.dim(1));
        });
        z.store(acc + h.cast<float>());
      });
}

// Nested loops whose inner loop swaps its two carried tiles (the yield reads a slot it writes).
ir::Function nested() {
  return trace_kernel<Out<float>, In<float>>(
      "nested", {out_param("z", DType::F32, {4, 64}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) {
        auto a = Tile<float>::zeros({4, 64});
        auto b = load_like(x, z);
        for_range(0, 3, [&](Index i) {
          for_range(0, i + 1, [&](Index) {
            auto t = a;
            a = b + 1.0f;
            b = t;
          });
        });
        z.store(a * 2.0f + b);
      });
}

// A large elementwise tile scaled by one element loaded per tile: the element is distributed, so
// its broadcast goes through shared memory, and the tile cannot be split over blocks.
ir::Function scale_by_loaded_element() {
  return trace_kernel<Out<float>, In<float>, In<float>>(
      "scale_by_loaded_element",
      {out_param("z", DType::F32, {8192}), in_param("x", DType::F32, 1),
       in_param("s", DType::F32, 1)},
      [](Out<float> z, In<float> x, In<float> s) {
        const Tile<float> scale = load(s, {z.tile_index(0)}, {1});
        z.store(load_like(x, z) * scale);
      });
}

// Two outputs written from uniform values (every element equal), one of them bool.
ir::Function uniform_store() {
  return trace_kernel<Out<int32_t>, Out<bool>>(
      "uniform_store",
      {out_param("id", DType::I32, {3, 40}), out_param("even", DType::Bool, {3, 40})},
      [](Out<int32_t> id, Out<bool> even) {
        const Index t = tile_index(0) * num_tiles(1) + tile_index(1);
        id.store(Tile<int32_t>::zeros(id.shape()) + t);
        even.store(broadcast((t / 2) * 2 == t, even.shape()));
      });
}

// bool tiles in memory (16 per vector access) and the bool ops.
ir::Function bool_ops() {
  return trace_kernel<Out<bool>, In<bool>, In<float>>(
      "bool_ops",
      {out_param("z", DType::Bool, {512}), in_param("x", DType::Bool, 1),
       in_param("y", DType::F32, 1)},
      [](Out<bool> z, In<bool> x, In<float> y) {
        auto a = load_like(x, z);
        auto b = load_like(y, z) > 0.0f;
        z.store((a & b) | ((!a) & (load_like(y, z) < -1.0f)));
      });
}

// Tiles at any element (load_at): a halo on either side of the block's own tile, padded and
// unpadded, of a 2-D f16 input (element accesses, never vectors that could straddle).
ir::Function load_at_halo() {
  return trace_kernel<Out<half>, In<half>, Scalar<int32_t>>(
      "load_at_halo",
      {out_param("z", DType::F16, {4, 64}), in_param("x", DType::F16, 2),
       scalar_param("shift", DType::I32)},
      [](Out<half> z, In<half> x, Scalar<int32_t> shift) {
        const Index r = z.tile_index(0) * 4, c = z.tile_index(1) * 64;
        auto left = load_at(x, {r, c - 1}, {4, 64});
        auto right = load_at(x, {r + shift, c + 1}, {4, 64}, Pad::none());
        z.store(left + right);
      });
}

// A tile stored in column pieces from a loop (store_part), after a whole-tile store of an mma-free
// uniform value, in bf16.
ir::Function store_parts() {
  return trace_kernel<Out<bfloat16>, In<bfloat16>>(
      "store_parts", {out_param("z", DType::BF16, {4, 256}), in_param("x", DType::BF16, 2)},
      [](Out<bfloat16> z, In<bfloat16> x) {
        z.store(Tile<bfloat16>::zeros({4, 256}));
        const Index r = z.tile_index(0) * 4, c0 = z.tile_index(1) * 256;
        for_range(0, 4, [&](Index c) {
          auto piece = load_at(x, {r, c0 + c * 64}, {4, 64});
          z.store_part(piece * piece, {0, c * 64});
        });
        z.store_part(Tile<bfloat16>::full({2, 2}, bfloat16(1.0f)), {1, 1});
      });
}

// RoPE's two halves: slices of a loaded f16 tile rotated and concatenated back, and a slice of
// a constant (which stays uniform).
ir::Function slice_concat() {
  return trace_kernel<Out<half>, In<half>>(
      "slice_concat", {out_param("z", DType::F16, {4, 64}), in_param("x", DType::F16, 2)},
      [](Out<half> z, In<half> x) {
        auto t = load_like(x, z).cast<float>();
        auto a = t.slice(1, 0, 32), b = t.slice(-1, 32, 32);
        auto c = Tile<float>::full({4, 40}, 0.5f).slice(1, 8, 32);
        z.store(concat({a * c - b, b * c + a}, 1).cast<half>());
      });
}

// A top-k along the rows of an f32 tile (sort and argsort descending, sliced), and an ascending
// sort along the columns of an i32 tile.
ir::Function sorts() {
  return trace_kernel<Out<float>, In<float>, In<int32_t>>(
      "sorts",
      {out_param("z", DType::F32, {8, 8}), in_param("x", DType::F32, 2),
       in_param("k", DType::I32, 2)},
      [](Out<float> z, In<float> x, In<int32_t> k) {
        const TopK<float> t = topk(load(x, {z.tile_index(0), 0}, {8, 64}, Pad::neg_inf()), 4, 1);
        auto s = sort(load_like(k, z), 0).cast<float>();
        z.store(concat({t.values, t.indices.cast<float>()}, 1) + s);
      });
}

// Rows of an embedding table chosen by an index tile, and a paged-cache read (rank 3, unpadded).
ir::Function gathers() {
  return trace_kernel<Out<half>, In<half>, In<int32_t>, In<half>>(
      "gathers",
      {out_param("z", DType::F16, {8, 64}), in_param("table", DType::F16, 2),
       in_param("ids", DType::I32, 1), in_param("pages", DType::F16, 3)},
      [](Out<half> z, In<half> table, In<int32_t> ids, In<half> pages) {
        auto rows = load(ids, {z.tile_index(0)}, {8});
        auto e = gather(table, rows, {z.tile_index(1) * 64}, {8, 64});
        auto p = gather(pages, load(ids, {0}, {1}), {0, 0}, {1, 8, 64}, Pad::none());
        z.store(e + p.reshape({8, 64}));
      });
}

// Adds into Accum parameters: a split-K GEMM's accumulator (grid rank 3) straight from the mma
// fragments, and a histogram's counts (a reduction's slice layout, held by several threads).
ir::Function accumulates() {
  return trace_kernel<Accum<float>, Accum<int32_t>, In<half>, In<half>, In<int32_t>>(
      "accumulates",
      {{"c", ir::ParamKind::Accum, DType::F32, 2, {}, 3},
       {"hist", ir::ParamKind::Accum, DType::I32, 1, {}, 3},
       in_param("a", DType::F16, 2),
       in_param("b", DType::F16, 2),
       in_param("v", DType::I32, 1)},
      [](Accum<float> c, Accum<int32_t> hist, In<half> a, In<half> b, In<int32_t> v) {
        const Index i = tile_index(0), j = tile_index(1), s = tile_index(2);
        Tile<float> acc = Tile<float>::zeros({64, 64});
        for_range(s, 8, num_tiles(2), [&](Index k) {
          acc = mma(load(a, {i, k}, {64, 32}), load(b, {k, j}, {32, 64}), acc);
        });
        c.add(acc, {i, j});
        const Tile<bool> hit = load(v, {s}, {256}).reshape({256, 1}) == iota<int32_t>({1, 32}, 1);
        hist.add_at(sum(hit.cast<int32_t>(), 0).reshape({32}), {0});
      });
}

// A load that must not reach past the tensor: out-of-bounds elements set the error flag.
ir::Function unpadded() {
  return trace_kernel<Out<float>, In<float>>(
      "unpadded", {out_param("z", DType::F32, {4, 64}), in_param("x", DType::F32, 2)},
      [](Out<float> z, In<float> x) { z.store(load_like(x, z, Pad::none()) * 2.0f); });
}

}  // namespace

ir::Function prepared(ir::Function f) {
  analysis::promote_locals(f);
  if (auto d = ir::verify(f)) ADD_FAILURE() << "invalid IR: " << d->message << "\n" << ir::print(f);
  analysis::dce(f);
  return f;
}

const std::vector<CorpusKernel>& corpus() {
  static const std::vector<CorpusKernel> kernels{
      {"add_f32", [] { return add<float>(1024); }},
      {"add_f16", [] { return add<half>(2048); }},
      {"add_ragged_tile", [] { return add<float>(100); }},
      {"add_f16_large_tile", [] { return add<half>(16384); }},
      {"scale_by_loaded_element", scale_by_loaded_element},
      {"saxpy", saxpy},
      {"float_math", float_math},
      {"integer_math", integer_math},
      {"float_math_more", float_math_more},
      {"integer_math_more", integer_math_more},
      {"reduce_more", reduce_more},
      {"casts", casts},
      {"shapes", shapes},
      {"softmax_f16", softmax_f16},
      {"softmax_rows", softmax_rows},
      {"rmsnorm_f16", rmsnorm_f16},
      {"reduce_fallback", reduce_fallback},
      {"gemm_f16", [] { return gemm<half, float>("gemm_f16", 64, 64, 32); }},
      {"gemm_bf16_acc_bf16", [] { return gemm<bfloat16, bfloat16>("gemm_bf16", 128, 64, 32); }},
      {"gemm_f16_ragged", [] { return gemm<half, half>("gemm_f16_ragged", 40, 24, 20); }},
      {"gemm_f32", [] { return gemm<float, float>("gemm_f32", 32, 32, 16); }},
      {"gemm_tf32", gemm_tf32},
      {"gemm_f64", [] { return gemm<double, double>("gemm_f64", 16, 16, 8); }},
      {"gemm_i8", [] { return gemm<int8_t, int32_t>("gemm_i8", 32, 32, 32); }},
      {"mma_epilogue", mma_epilogue},
      // Pipelined on sm_90a (TMA + wgmma): the tile shapes of the fast path and a narrow K.
      {"gemm_f16_128x256x64",
       [] { return gemm<half, float>("gemm_f16_128x256x64", 128, 256, 64); }},
      {"gemm_f16_prefetch",
       [] { return gemm<half, float>("gemm_f16_prefetch", 128, 256, 64, /*prefetch_b=*/true); }},
      {"matvec_prefetch", matvec_prefetch},
      {"gemm_bf16_64x128x32",
       [] { return gemm<bfloat16, float>("gemm_bf16_64x128x32", 64, 128, 32); }},
      {"gemm_bf16_epilogue",
       [] { return gemm_epilogue<bfloat16>("gemm_bf16_epilogue", 128, 128, 64); }},
      {"gemm_f16_epilogue_128x256x64",
       [] { return gemm_epilogue<half>("gemm_f16_epilogue_128x256x64", 128, 256, 64); }},
      {"control", control},
      {"nested", nested},
      {"uniform_store", uniform_store},
      {"bool_ops", bool_ops},
      {"unpadded", unpadded},
      {"load_at_halo", load_at_halo},
      {"slice_concat", slice_concat},
      {"sorts", sorts},
      {"gathers", gathers},
      {"store_parts", store_parts},
      {"accumulates", accumulates},
  };
  return kernels;
}

ir::Function corpus_kernel(const std::string& name) {
  for (const CorpusKernel& k : corpus())
    if (k.name == name) return prepared(k.make());
  ADD_FAILURE() << "no corpus kernel named " << name;
  return {};
}

namespace {
backend::cuda::KernelSpec spec_for(const ir::Function& f, backend::cuda::Arch arch, bool aligned,
                                   bool extent_aligned) {
  backend::cuda::KernelSpec s{arch, {}};
  for (size_t i = 0; i < f.params.size(); ++i)
    s.tensors.push_back(
        {aligned, aligned ? 16 : static_cast<int>(dtype_size(f.params[i].dtype)), extent_aligned});
  return s;
}
}  // namespace

backend::cuda::KernelSpec aligned_spec(const ir::Function& f, backend::cuda::Arch arch) {
  return spec_for(f, arch, true, false);
}
backend::cuda::KernelSpec contiguous_spec(const ir::Function& f, backend::cuda::Arch arch) {
  return spec_for(f, arch, true, true);
}
backend::cuda::KernelSpec unaligned_spec(const ir::Function& f, backend::cuda::Arch arch) {
  return spec_for(f, arch, false, false);
}

std::string kernel_part(const std::string& source) {
  const size_t at = source.find("// ---- kernel '");
  return at == std::string::npos ? source : source.substr(at);
}

Built build(const ir::Function& f, const backend::cuda::KernelSpec& spec) {
  Built b;
  b.kernel = backend::cuda::emit(f, spec);
  // TESSERA_TEST_SOURCE_DIR=<dir>: each emitted source is written there, numbered in the order
  // the tests emit them, so two builds' outputs can be compared file by file (`diff -r`): how a
  // change to the backend's driving code is shown to leave the generated CUDA byte-identical.
  if (const char* dir = std::getenv("TESSERA_TEST_SOURCE_DIR")) {
    static int next = 0;
    char seq[16];
    std::snprintf(seq, sizeof seq, "%04d", next++);
    std::ofstream(std::string(dir) + "/" + seq + "_" + f.name + "_" + spec.arch.str() + ".cu")
        << b.kernel.source;
  }
  try {
    b.compiled = backend::cuda::compile_cuda(b.kernel.source, f.name + ".cu", spec.arch);
  } catch (const Error& e) {
    ADD_FAILURE() << e.what() << "\n---- kernel ----\n" << kernel_part(b.kernel.source);
  }
  return b;
}

}  // namespace tessera::test

// Each kernel runs twice on the same random inputs: on the CPU reference backend and on the GPU.
// Results must agree to the dtype's rounding (exactly for integers). Shapes are ragged on purpose:
// extents are not multiples of the tiles, so edge tiles are masked and padded.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "../runtime/scoped_env.hpp"

using namespace tessera;
using namespace tessera::tile;

namespace {

std::mt19937& rng() {
  static std::mt19937 gen{std::random_device{}()};
  return gen;
}

template <class T>
std::vector<T> random_values(int64_t n, double lo = -2, double hi = 2) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) {
    if constexpr (std::is_integral_v<T>)
      e = static_cast<T>(std::lround(dist(rng()) * 50));
    else
      e = T(static_cast<float>(dist(rng())));
  }
  return v;
}

template <class T>
double tolerance() {
  if constexpr (std::is_same_v<T, half>)
    return 2e-3;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 1.6e-2;
  else if constexpr (std::is_same_v<T, float>)
    return 2e-5;
  else
    return 0;
}

template <class T>
void expect_close(const std::vector<T>& cpu, const std::vector<T>& gpu, double tol,
                  const std::string& what) {
  ASSERT_EQ(cpu.size(), gpu.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double a = static_cast<double>(static_cast<float>(cpu[i]));
    const double b = static_cast<double>(static_cast<float>(gpu[i]));
    const bool ok = (std::isnan(a) && std::isnan(b)) || a == b ||
                    std::fabs(a - b) <= tol * std::max(1.0, std::fabs(a));
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << ": cpu " << a << ", gpu " << b;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cpu.size() << " elements differ";
}

// Runs `run(device)` (which returns the result as a host vector) on both backends and compares.
template <class T, class Run>
void differential(const std::string& what, Run&& run, double tol = tolerance<T>()) {
  const std::vector<T> cpu = run(Device::cpu());
  const std::vector<T> gpu = run(Device::cuda(0));
  expect_close(cpu, gpu, tol, what);
}

// ---- kernels -----------------------------------------------------------------------------------

template <class T>
TESSERA_KERNEL(add_k, Out<T> z, In<T> x, In<T> y) {
  z.store(load_like(x, z) + load_like(y, z));
};

template <class T>
TESSERA_KERNEL(saxpy_k, Out<T> z, Scalar<T> a, In<T> x, In<T> y) {
  z.store(a * load_like(x, z) + load_like(y, z));
};

TESSERA_KERNEL(math_k, Out<float> z, In<float> x) {
  auto v = load_like(x, z);
  auto p = abs(v) + 0.5f;
  z.store(exp(v) * 0.25f + log(p) - sqrt(p) + rsqrt(p) + tanh(v) + sin(v) * cos(v) - (-v) +
          maximum(v, p * 0.1f) / minimum(p, 1.5f));
};

TESSERA_KERNEL(select_k, Out<float> z, In<float> x, In<float> y) {
  auto a = load_like(x, z);
  auto b = load_like(y, z);
  z.store(select(a > b, a - b, b * 2.0f));
};

TESSERA_KERNEL(int_k, Out<int32_t> z, In<int32_t> x, In<int32_t> y) {
  auto a = load_like(x, z);
  auto b = load_like(y, z);
  z.store((a * b + a / (b | 1)) - maximum(a, b));
};

TESSERA_KERNEL(cast_k, Out<float> z, In<float> x) {
  auto v = load_like(x, z);
  z.store(v.cast<half>().cast<float>() + v.cast<bfloat16>().cast<float>() +
          (v * 10.0f).cast<int32_t>().cast<float>());
};

// A row vector broadcast against a matrix tile, and a transposed tile.
TESSERA_KERNEL(broadcast_k, Out<float> z, In<float> m, In<float> row) {
  auto t = load_like(m, z);
  auto r = load(row, {0, z.tile_index(1)}, {1, z.shape()[1]});
  z.store(t * r + t.transpose().transpose());
};

template <int R, int C>
TESSERA_KERNEL(transpose_k, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(1), z.tile_index(0)}, {C, R}).transpose());
};

template <int Axis>
TESSERA_KERNEL(reduce_k, Out<float> z, In<float> x) {
  auto v = load_like(x, z, Pad::zero());
  auto s = sum(v, Axis);
  auto hi = max(load_like(x, z, Pad::neg_inf()), Axis);
  auto lo = min(load_like(x, z, Pad::value_of(INFINITY)), Axis);
  z.store((v - s * 0.01f + hi - lo).reshape(z.shape()));
};

template <class T>
TESSERA_KERNEL(softmax_k, Out<T> z, In<T> x) {
  auto v = load_like(x, z, Pad::neg_inf()).template cast<float>();
  auto e = exp(v - max(v, 1));
  z.store((e / sum(e, 1)).template cast<T>());
};

template <class T, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_k, Out<float> c, In<T> a, In<T> b) {
  auto acc = Tile<float>::zeros({BM, BN});
  const auto k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc =
        mma(load(a, {c.tile_index(0), k}, {BM, BK}), load(b, {k, c.tile_index(1)}, {BK, BN}), acc);
  });
  c.store(acc);
};

TESSERA_KERNEL(control_k, Out<float> z, In<float> x) {
  auto v = load_like(x, z);
  auto acc = zeros_like(v);
  for_range(0, 3, [&](Index i) { acc = acc + v * i.cast<float>(); });
  auto first = z.tile_index(0) == 0;
  if_(
      first, [&] { acc = acc * 2.0f; }, [&] { acc = acc - 1.0f; });
  z.store(acc + iota<float>(z.shape()) + z.num_tiles(0).cast<float>());
};

// One element loaded per tile and broadcast over a large tile: elementwise-looking, but the
// element's broadcast goes through shared memory, so the tile stays in one block.
TESSERA_KERNEL(scale_k, Out<float> z, In<float> x, In<float> s) {
  z.store(load_like(x, z) * load(s, {z.tile_index(0)}, {1}));
};

// i8 elementwise on large tiles (16 elements a vector access).
TESSERA_KERNEL(int8_k, Out<int8_t> z, In<int8_t> x, In<int8_t> y) {
  z.store(load_like(x, z) - load_like(y, z) / Tile<int8_t>::full({}, int8_t{3}));
};

// ---- tests -------------------------------------------------------------------------------------

template <class T>
void check_add(int64_t n, int64_t tile) {
  auto xs = random_values<T>(n), ys = random_values<T>(n);
  differential<T>("add " + std::string(dtype_name(dtype_v<T>)), [&](Device d) {
    auto [z, x, y] = add_k<T>(zeros<T>({n}, d).partition({tile}), from_host<T>(xs, {n}, d),
                              from_host<T>(ys, {n}, d))
                         .sync();
    return std::move(z).unpartition().to_vector();
  });
}

TEST(GpuDifferential, AddF32Ragged) {
  check_add<float>(100003, 1024);
}
TEST(GpuDifferential, AddF16Ragged) {
  check_add<half>(77777, 2048);
}
TEST(GpuDifferential, AddBf16Ragged) {
  check_add<bfloat16>(5000, 256);
}
TEST(GpuDifferential, AddF32TinyTiles) {
  check_add<float>(1000, 3);
}
// Tiles of 16384 f16 and 32768 f32 elements run as 4 and 8 blocks each (LayoutPlan::
// blocks_per_tile), the last tile ragged.
TEST(GpuDifferential, AddF16LargeTilesRunAsSeveralBlocks) {
  check_add<half>(100003, 16384);
}
TEST(GpuDifferential, AddF32HugeTilesRunAsSeveralBlocks) {
  check_add<float>(300001, 32768);
}

TEST(GpuDifferential, LargeTileScaledByOneLoadedElement) {
  const int64_t n = 50001, tile = 8192, tiles = (n + tile - 1) / tile;
  auto xs = random_values<float>(n), ss = random_values<float>(tiles);
  differential<float>("scale", [&](Device d) {
    auto [z, x, s] = scale_k(zeros<float>({n}, d).partition({tile}), from_host<float>(xs, {n}, d),
                             from_host<float>(ss, {tiles}, d))
                         .sync();
    return std::move(z).unpartition().to_vector();
  });
}

TEST(GpuDifferential, Int8LargeTiles) {
  const int64_t n = 100003;
  auto xs = random_values<int8_t>(n, -2, 2), ys = random_values<int8_t>(n, -2, 2);
  differential<int8_t>("int8", [&](Device d) {
    auto [z, x, y] = int8_k(zeros<int8_t>({n}, d).partition({32768}), from_host<int8_t>(xs, {n}, d),
                            from_host<int8_t>(ys, {n}, d))
                         .sync();
    return std::move(z).unpartition().to_vector();
  });
}

TEST(GpuDifferential, SaxpyF32) {
  const int64_t n = 65537;
  auto xs = random_values<float>(n), ys = random_values<float>(n);
  differential<float>("saxpy", [&](Device d) {
    auto [z, a, x, y] = saxpy_k<float>(zeros<float>({n}, d).partition({4096}), 1.5f,
                                       from_host<float>(xs, {n}, d), from_host<float>(ys, {n}, d))
                            .sync();
    return std::move(z).unpartition().to_vector();
  });
}

TEST(GpuDifferential, MathF32) {
  const int64_t n = 10007;
  auto xs = random_values<float>(n);
  differential<float>(
      "math",
      [&](Device d) {
        auto [z, x] =
            math_k(zeros<float>({n}, d).partition({512}), from_host<float>(xs, {n}, d)).sync();
        return std::move(z).unpartition().to_vector();
      },
      1e-4);
}

TEST(GpuDifferential, SelectF32) {
  const int64_t n = 3001;
  auto xs = random_values<float>(n), ys = random_values<float>(n);
  differential<float>("select", [&](Device d) {
    auto [z, x, y] = select_k(zeros<float>({n}, d).partition({256}), from_host<float>(xs, {n}, d),
                              from_host<float>(ys, {n}, d))
                         .sync();
    return std::move(z).unpartition().to_vector();
  });
}

TEST(GpuDifferential, IntegerOpsI32) {
  const int64_t n = 4099;
  auto xs = random_values<int32_t>(n), ys = random_values<int32_t>(n);
  differential<int32_t>(
      "i32",
      [&](Device d) {
        auto [z, x, y] = int_k(zeros<int32_t>({n}, d).partition({512}),
                               from_host<int32_t>(xs, {n}, d), from_host<int32_t>(ys, {n}, d))
                             .sync();
        return std::move(z).unpartition().to_vector();
      },
      0);
}

TEST(GpuDifferential, CastsF32) {
  const int64_t n = 2049;
  auto xs = random_values<float>(n, -1e3, 1e3);
  differential<float>("cast", [&](Device d) {
    auto [z, x] =
        cast_k(zeros<float>({n}, d).partition({256}), from_host<float>(xs, {n}, d)).sync();
    return std::move(z).unpartition().to_vector();
  });
}

TEST(GpuDifferential, BroadcastAndTranspose2D) {
  const int64_t r = 77, c = 130;
  auto ms = random_values<float>(r * c), rows = random_values<float>(c);
  differential<float>("broadcast", [&](Device d) {
    auto [z, m, row] =
        broadcast_k(zeros<float>({r, c}, d).partition({16, 32}), from_host<float>(ms, {r, c}, d),
                    from_host<float>(rows, {1, c}, d))
            .sync();
    return std::move(z).unpartition().to_vector();
  });
}

TEST(GpuDifferential, TransposeTiles) {
  const int64_t r = 70, c = 45;
  auto xs = random_values<float>(r * c);
  differential<float>("transpose", [&](Device d) {
    auto [z, x] = transpose_k<16, 32>(zeros<float>({c, r}, d).partition({16, 32}),
                                      from_host<float>(xs, {r, c}, d))
                      .sync();
    return std::move(z).unpartition().to_vector();
  });
}

template <int Axis>
void check_reduce() {
  const int64_t r = 100, c = 300;
  auto xs = random_values<float>(r * c);
  differential<float>(
      "reduce axis " + std::to_string(Axis),
      [&](Device d) {
        auto [z, x] = reduce_k<Axis>(zeros<float>({r, c}, d).partition({32, 128}),
                                     from_host<float>(xs, {r, c}, d))
                          .sync();
        return std::move(z).unpartition().to_vector();
      },
      1e-4);
}
TEST(GpuDifferential, ReduceAxis0) {
  check_reduce<0>();
}
TEST(GpuDifferential, ReduceAxis1) {
  check_reduce<1>();
}

template <class T>
void check_softmax(int64_t rows, int64_t cols, int64_t tile_cols) {
  auto xs = random_values<T>(rows * cols, -4, 4);
  differential<T>("softmax", [&](Device d) {
    auto [z, x] = softmax_k<T>(zeros<T>({rows, cols}, d).partition({1, tile_cols}),
                               from_host<T>(xs, {rows, cols}, d))
                      .sync();
    return std::move(z).unpartition().to_vector();
  });
}
TEST(GpuDifferential, SoftmaxF32Ragged) {
  check_softmax<float>(33, 1000, 1024);
}
TEST(GpuDifferential, SoftmaxF16Wide) {
  check_softmax<half>(16, 4096, 4096);
}
// Rows longer than the threads' registers hold (65536 = 128 elements a thread): streamed, each use
// re-reading the input one vector at a time (LayoutPlan::stream_rows); ragged ones too.
TEST(GpuDifferential, SoftmaxF16LongRowsAreStreamed) {
  check_softmax<half>(6, 65536, 65536);
}
TEST(GpuDifferential, SoftmaxF16LongRaggedRowsAreStreamed) {
  check_softmax<half>(5, 50000, 65536);
}
// f32 rows of 32768 (512 threads: streamed) kept in shared memory by the first pass on sm_90
// and newer (128 KB, Emitter::plan_stash; the emitted code: EmittedCode.AStreamedRow* in
// layout_test.cpp): the stash's f32 path, ragged rows' pad included. (sm_8x re-reads: 99 KB.)
TEST(GpuDifferential, SoftmaxF32LongRowsKeptInSharedMemory) {
  check_softmax<float>(5, 32768, 32768);
  check_softmax<float>(4, 30000, 32768);
}
// Streamed passes load several vectors a step (LayoutPlan::stream_group: 4),
// combining the elements in the same order as one vector a step, which these force (a step count
// that the group does not divide takes it too). Specializations no other test compiles, so that
// the switch is read when these are emitted.
TEST(GpuDifferential, SoftmaxBf16LongRowsStreamedOneVectorAStep) {
  ScopedEnv group("TESSERA_AB_STREAM_GROUP", "1");
  check_softmax<bfloat16>(6, 65536, 65536);
  check_softmax<bfloat16>(5, 50000, 65536);
}

template <class T>
TESSERA_KERNEL(norms_k, Out<T> z, In<T> x, In<float> w, In<float> b) {
  const int64_t cols = z.shape()[1];
  const float inv = 1.0f / static_cast<float>(cols);
  auto v = load_like(x, z).template cast<float>();
  auto ms = rsqrt(sum(v * v, 1) * inv + 1e-5f);
  auto d = v - sum(v, 1) * inv;
  auto r = rsqrt(sum(d * d, 1) * inv + 1e-5f);
  // RMSNorm and LayerNorm of the same row, added: every streamed path in one kernel.
  z.store((v * ms * load(w, {0, 0}, {1, cols}) + d * r * load(b, {0, 0}, {1, cols}))
              .template cast<T>());
};
template <class T>
void check_norms(int64_t rows, int64_t cols, int64_t tile_cols) {
  auto xs = random_values<T>(rows * cols, -4, 4);
  auto ws = random_values<float>(tile_cols), bs = random_values<float>(tile_cols);
  differential<T>("norms", [&](Device d) {
    auto [z, x, w, b] =
        norms_k<T>(zeros<T>({rows, cols}, d).partition({1, tile_cols}),
                   from_host<T>(xs, {rows, cols}, d), from_host<float>(ws, {1, tile_cols}, d),
                   from_host<float>(bs, {1, tile_cols}, d))
            .sync();
    return std::move(z).unpartition().to_vector();
  });
}
TEST(GpuDifferential, NormsF16RowsInRegisters) {
  check_norms<half>(16, 4096, 4096);
}
TEST(GpuDifferential, NormsF16LongRowsAreStreamed) {
  check_norms<half>(6, 65536, 65536);
}
TEST(GpuDifferential, NormsBf16LongRaggedRowsAreStreamed) {
  check_norms<bfloat16>(5, 50000, 65536);
}
TEST(GpuDifferential, NormsF16LongRowsStreamedOneVectorAStep) {
  ScopedEnv group("TESSERA_AB_STREAM_GROUP", "1");
  check_norms<half>(7, 32768, 32768);
  check_norms<half>(5, 30000, 32768);
}

template <class T>
void check_gemm(int64_t m, int64_t n, int64_t k) {
  auto as = random_values<T>(m * k, -1, 1), bs = random_values<T>(k * n, -1, 1);
  differential<float>(
      "gemm",
      [&](Device d) {
        auto [c, a, b] =
            gemm_k<T, 64, 64, 32>(zeros<float>({m, n}, d).partition({64, 64}),
                                  from_host<T>(as, {m, k}, d), from_host<T>(bs, {k, n}, d))
                .sync();
        return std::move(c).unpartition().to_vector();
      },
      1e-3);
}
TEST(GpuDifferential, GemmF16Ragged) {
  check_gemm<half>(130, 100, 70);
}
TEST(GpuDifferential, GemmBf16) {
  check_gemm<bfloat16>(128, 192, 256);
}

// The GEMM loop pipelined on sm_90a (TMA + wgmma; rows 16-byte aligned), with a fused epilogue
// (bias row, relu, cast to the inputs' type), at the tile shapes of bench/gemm and smaller ones.
template <class T, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_epilogue_k, Out<T> c, In<T> a, In<T> b, In<float> bias) {
  auto acc = Tile<float>::zeros({BM, BN});
  const auto k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc =
        mma(load(a, {c.tile_index(0), k}, {BM, BK}), load(b, {k, c.tile_index(1)}, {BK, BN}), acc);
  });
  auto row = load(bias, {0, c.tile_index(1)}, {1, BN});
  c.store(maximum(acc + broadcast(row, {BM, BN}), 0.0f).template cast<T>());
};

template <class T, int BM, int BN, int BK>
void check_pipelined_gemm(int64_t m, int64_t n, int64_t k) {
  const auto as = random_values<T>(m * k, -1, 1), bs = random_values<T>(k * n, -1, 1);
  const auto biases = random_values<float>(n, -1, 1);
  const std::string what = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                           std::to_string(k) + " tiles " + std::to_string(BM) + "x" +
                           std::to_string(BN) + "x" + std::to_string(BK);
  differential<float>(
      what,
      [&](Device d) {
        auto [c, a, b] =
            gemm_k<T, BM, BN, BK>(zeros<float>({m, n}, d).partition({BM, BN}),
                                  from_host<T>(as, {m, k}, d), from_host<T>(bs, {k, n}, d))
                .sync();
        return std::move(c).unpartition().to_vector();
      },
      1e-3);
  differential<T>(what + " + bias + relu", [&](Device d) {
    auto [c, a, b, bias] = gemm_epilogue_k<T, BM, BN, BK>(
                               zeros<T>({m, n}, d).partition({BM, BN}), from_host<T>(as, {m, k}, d),
                               from_host<T>(bs, {k, n}, d), from_host<float>(biases, {1, n}, d))
                               .sync();
    return std::move(c).unpartition().to_vector();
  });
}
TEST(GpuDifferential, PipelinedGemmF16RaggedOnEveryAxis) {
  check_pipelined_gemm<half, 128, 256, 64>(300, 520, 200);
}
TEST(GpuDifferential, PipelinedGemmBf16RaggedOnEveryAxis) {
  check_pipelined_gemm<bfloat16, 128, 256, 64>(260, 392, 328);
}
TEST(GpuDifferential, PipelinedGemmKSmallerThanOneTile) {
  check_pipelined_gemm<half, 128, 128, 64>(200, 136, 40);
}
TEST(GpuDifferential, PipelinedGemmManyKStepsWrapTheRing) {
  // 40 K steps through a ring of at most 6 stages, on more tiles than multiprocessors.
  check_pipelined_gemm<bfloat16, 64, 128, 32>(700, 1100, 1280);
}
TEST(GpuDifferential, PipelinedGemmDecodeShape) {
  check_pipelined_gemm<half, 64, 128, 64>(16, 1032, 512);
}
// Tiles of four warps on sm_80 (64x64: 32x32 warp tiles; 128x128x32: 64x64 warp tiles and
// 64-byte swizzled A rows), ragged M and N.
TEST(GpuDifferential, PipelinedGemmF16SmallTiles) {
  check_pipelined_gemm<half, 64, 64, 32>(190, 264, 104);
}
TEST(GpuDifferential, PipelinedGemmBf16NarrowKSteps) {
  check_pipelined_gemm<bfloat16, 128, 128, 32>(333, 200, 328);
}
// A K extent that is not a whole number of 16-byte chunks (a column slice of a wider tensor, so
// its rows stay 16-byte aligned): the last chunk of each row of A is copied in part and
// zero-filled (cp.async's source size on sm_80), never read past the slice.
TEST(GpuDifferential, PipelinedGemmRaggedKSliceCopiesPartialChunks) {
  const int64_t m = 150, n = 136, k = 130, wide = 144;
  const auto as = random_values<half>(m * wide, -1, 1), bs = random_values<half>(k * n, -1, 1);
  differential<float>(
      "gemm of a [150, 130] column slice",
      [&](Device d) {
        auto [c, a, b] = gemm_k<half, 64, 128, 64>(zeros<float>({m, n}, d).partition({64, 128}),
                                                   from_host<half>(as, {m, wide}, d).slice(1, 0, k),
                                                   from_host<half>(bs, {k, n}, d))
                             .sync();
        return std::move(c).unpartition().to_vector();
      },
      1e-3);
}

TEST(GpuDifferential, ControlFlow) {
  const int64_t n = 999;
  auto xs = random_values<float>(n);
  differential<float>("control", [&](Device d) {
    auto [z, x] =
        control_k(zeros<float>({n}, d).partition({128}), from_host<float>(xs, {n}, d)).sync();
    return std::move(z).unpartition().to_vector();
  });
}

TESSERA_KERNEL(unpadded_k, Out<float> z, In<float> x) {
  z.store(load_like(x, z, Pad::none()));
};

TEST(GpuDifferential, UnpaddedLoadOutsideTheTensorFailsOnTheGpu) {
  const int64_t n = 1000;  // the last tile of 128 reaches element 1023
  auto xs = random_values<float>(n);
  auto future = unpadded_k(zeros<float>({n}, Device::cuda(0)).partition({128}),
                           from_host<float>(xs, {n}, Device::cuda(0)));
  EXPECT_THROW(std::move(future).sync(), BoundsError);
}

}  // namespace

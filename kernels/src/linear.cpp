// Decode-shaped linear layers (linear.hpp): each block owns Rows rows of w (Rows outputs of one row
// of x) and walks K in chunks of Chunk elements, summing each chunk's products x * w along K into
// a [Rows, 1] f32 column (a row of a [Rows, Chunk] tile is one warp's, so the sum is shuffles, and
// no [Rows, Chunk] accumulator holds registers across the loop). A chunk as long as K makes the
// loop one step: every load of the block is in flight at once, one wait on memory a block. The
// block's reads of w are Rows contiguous runs of Chunk elements, so wide vector loads; there is no
// split over K (that would need an accumulating output), so the parallelism is N / Rows blocks. The
// shape is chosen per (GPU architecture, dtypes, shape bucket) by the autotuner among a few
// candidates; on the CPU backend the first candidate runs, untimed.
// Each kernel starts with prefetch() of its weights (docs/async.md): on sm_90 its blocks start
// them into L2 while the kernel before it on the stream finishes. Not x (that kernel writes it)
// nor the small norm weight; an LM head's weight is over the prefetch cap and is left alone.
#include <algorithm>
#include <string>

#include <tessera/tune.hpp>

#include "host.hpp"
#include "tessera/kernels/linear.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

// x row m times w's rows [j * Rows, (j + 1) * Rows), summed along K: [1, Rows] in f32.
template <int Rows, int Chunk, Element T>
Tile<float> rows_dot(const In<T, 2>& x, const In<T, 2>& w) {
  const Index m = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({Rows, 1});
  const Index chunks = ((x.dim(1) + (Chunk - 1)) / Chunk).template cast<int32_t>();
  for_range(0, chunks, [&](Index k) {
    acc = acc + sum(load(w, {j, k}, {Rows, Chunk}).template cast<float>() *
                        load(x, {m, k}, {1, Chunk}).template cast<float>(),
                    1);
  });
  return acc.reshape({1, Rows});
}

template <Element T, int Rows, int Chunk>
TESSERA_KERNEL(linear_rows, Out<T, 2> y, In<T, 2> x, In<T, 2> w) {
  prefetch(w);
  y.store(rows_dot<Rows, Chunk>(x, w).template cast<T>());
};

// 1 / rms of x row m ([1, 1]): its K elements' squares summed in chunks (a row is cached in L2
// after the first block that reads it).
template <int Chunk, Element T>
Tile<float> inv_rms(const In<T, 2>& x, const Index& m, const Index& chunks, const Tile<float>& eps,
                    const Tile<float>& inv_k) {
  Tile<float> squares = Tile<float>::zeros({1, Chunk});
  for_range(0, chunks, [&](Index k) {
    const Tile<float> xk = load(x, {m, k}, {1, Chunk}).template cast<float>();
    squares = fma(xk, xk, squares);
  });
  return rsqrt(sum(squares, 1) * inv_k + eps);
}

// Chunk k of x row m normalized and rounded to T, as rms_norm's result is, in f32 [1, Chunk].
template <int Chunk, Element T>
Tile<float> normed_chunk(const In<T, 2>& x, const In<T, 1>& norm_w, const Index& m, const Index& k,
                         const Tile<float>& inv) {
  return (load(x, {m, k}, {1, Chunk}).template cast<float>() * inv *
          load(norm_w, {k}, {Chunk}).template cast<float>().reshape({1, Chunk}))
      .template cast<T>()
      .template cast<float>();
}

// rms_norm(x) @ w^T: each block first computes its row's rms, then runs rows_dot's loop on the
// normalized row (so it equals rms_norm then linear), saving the norm's launch.
template <Element T, int Rows, int Chunk>
TESSERA_KERNEL(linear_rows_rms, Out<T, 2> y, In<T, 2> x, In<T, 1> norm_w, In<T, 2> w,
               Scalar<float> eps, Scalar<float> inv_k) {
  prefetch(w);
  const Index m = tile_index(0), j = tile_index(1);
  const Index chunks = ((x.dim(1) + (Chunk - 1)) / Chunk).template cast<int32_t>();
  const Tile<float> inv = inv_rms<Chunk>(x, m, chunks, eps, inv_k);
  Tile<float> acc = Tile<float>::zeros({Rows, 1});
  for_range(0, chunks, [&](Index k) {
    acc = acc + sum(load(w, {j, k}, {Rows, Chunk}).template cast<float>() *
                        normed_chunk<Chunk>(x, norm_w, m, k, inv),
                    1);
  });
  y.store(acc.reshape({1, Rows}).template cast<T>());
};

// The same for rows of at most Width elements (the host checks K <= Width), without a loop: the
// weight tile's load comes first (it is the product's first operand), so it is in flight with the
// row's while the rms is reduced, one wait on memory a block instead of the row's and then the
// weights'. Padded past K: zeros add nothing to the squares (inv_k is 1 / K) or to the products.
template <int Width, Element T>
Tile<float> whole_normed_row(const In<T, 2>& x, const In<T, 1>& norm_w, const Index& m,
                             const Tile<float>& eps, const Tile<float>& inv_k) {
  // The norm weight first in its product (a commutative one: the same value), so that its load
  // is issued before the rms's barriers rather than after them.
  const Tile<float> nw = load(norm_w, {0}, {Width}).template cast<float>().reshape({1, Width});
  const Tile<float> xr = load(x, {m, 0}, {1, Width}).template cast<float>();
  const Tile<float> inv = rsqrt(sum(xr * xr, 1) * inv_k + eps);
  return (nw * (xr * inv)).template cast<T>().template cast<float>();
}

template <Element T, int Rows, int Width>
TESSERA_KERNEL(linear_rows_rms_whole, Out<T, 2> y, In<T, 2> x, In<T, 1> norm_w, In<T, 2> w,
               Scalar<float> eps, Scalar<float> inv_k) {
  prefetch(w);
  const Index m = tile_index(0), j = tile_index(1);
  y.store(sum(load(w, {j, 0}, {Rows, Width}).template cast<float>() *
                  whole_normed_row<Width>(x, norm_w, m, eps, inv_k),
              1)
              .reshape({1, Rows})
              .template cast<T>());
};

// silu(rms_norm(x) @ w_gate^T) * (rms_norm(x) @ w_up^T), the norm recomputed per block likewise.
template <Element T, int Rows, int Chunk>
TESSERA_KERNEL(linear_rows_swiglu_rms, Out<T, 2> y, In<T, 2> x, In<T, 1> norm_w, In<T, 2> w_gate,
               In<T, 2> w_up, Scalar<float> eps, Scalar<float> inv_k) {
  prefetch(w_gate);
  prefetch(w_up);
  const Index m = tile_index(0), j = tile_index(1);
  const Index chunks = ((x.dim(1) + (Chunk - 1)) / Chunk).template cast<int32_t>();
  const Tile<float> inv = inv_rms<Chunk>(x, m, chunks, eps, inv_k);
  Tile<float> gate = Tile<float>::zeros({Rows, 1});
  Tile<float> up = Tile<float>::zeros({Rows, 1});
  for_range(0, chunks, [&](Index k) {
    const Tile<float> xk = normed_chunk<Chunk>(x, norm_w, m, k, inv);
    gate = gate + sum(load(w_gate, {j, k}, {Rows, Chunk}).template cast<float>() * xk, 1);
    up = up + sum(load(w_up, {j, k}, {Rows, Chunk}).template cast<float>() * xk, 1);
  });
  const Tile<float> g = gate.reshape({1, Rows});
  const Tile<float> u = up.reshape({1, Rows});
  y.store((g / (exp(-g) + 1.0f) * u).template cast<T>());
};

// linear_rows_swiglu_rms's rows of at most Width elements, as linear_rows_rms_whole. (w_up's
// load comes after the gate's sum: placed by its first use.)
template <Element T, int Rows, int Width>
TESSERA_KERNEL(linear_rows_swiglu_rms_whole, Out<T, 2> y, In<T, 2> x, In<T, 1> norm_w,
               In<T, 2> w_gate, In<T, 2> w_up, Scalar<float> eps, Scalar<float> inv_k) {
  prefetch(w_gate);
  prefetch(w_up);
  const Index m = tile_index(0), j = tile_index(1);
  const Tile<float> xn = whole_normed_row<Width>(x, norm_w, m, eps, inv_k);
  const Tile<float> g =
      sum(load(w_gate, {j, 0}, {Rows, Width}).template cast<float>() * xn, 1).reshape({1, Rows});
  const Tile<float> u =
      sum(load(w_up, {j, 0}, {Rows, Width}).template cast<float>() * xn, 1).reshape({1, Rows});
  y.store((g / (exp(-g) + 1.0f) * u).template cast<T>());
};

template <Element T, int Rows, int Chunk>
TESSERA_KERNEL(linear_rows_residual, Out<T, 2> y, In<T, 2> x, In<T, 2> w, In<T, 2> residual) {
  prefetch(w);
  y.store((rows_dot<Rows, Chunk>(x, w) + load_like(residual, y).template cast<float>())
              .template cast<T>());
};

// The gated MLP's first half from paired rows: w [2N, K] holds gate row i at 2i and up row i at
// 2i + 1, so a block's gate and up rows are ONE [2 Rows, K] tile and one load. (With two weight
// tensors, canonical_order places w_up's load at its first use, after the gate's sum and its
// barriers: a second wait on memory.) sums [2 Rows, 1] -> [Rows, 2]: column 0 the gates, 1 the
// ups; silu(gate) * up, [1, Rows].
inline Tile<float> swiglu_of_pairs(const Tile<float>& sums, int rows) {
  const Tile<float> s = sums.reshape({rows, 2});
  const Tile<float> g = s.slice(1, 0, 1).reshape({1, rows});
  const Tile<float> u = s.slice(1, 1, 1).reshape({1, rows});
  return g / (exp(-g) + 1.0f) * u;
}

// Paired rows, K in chunks (linear_rows_swiglu_rms's loop).
template <Element T, int Rows, int Chunk>
TESSERA_KERNEL(linear_rows_swiglu_rms_pairs, Out<T, 2> y, In<T, 2> x, In<T, 1> norm_w,
               In<T, 2> w_pairs, Scalar<float> eps, Scalar<float> inv_k) {
  prefetch(w_pairs);
  const Index m = tile_index(0), j = tile_index(1);
  const Index chunks = ((x.dim(1) + (Chunk - 1)) / Chunk).template cast<int32_t>();
  const Tile<float> inv = inv_rms<Chunk>(x, m, chunks, eps, inv_k);
  Tile<float> acc = Tile<float>::zeros({2 * Rows, 1});
  for_range(0, chunks, [&](Index k) {
    acc = acc + sum(load(w_pairs, {j, k}, {2 * Rows, Chunk}).template cast<float>() *
                        normed_chunk<Chunk>(x, norm_w, m, k, inv),
                    1);
  });
  y.store(swiglu_of_pairs(acc, Rows).template cast<T>());
};

// Paired rows of at most Width elements, loop-free (linear_rows_rms_whole's form): the pair
// tile's load is issued with x's row, before the rms; one wait on memory a block.
template <Element T, int Rows, int Width>
TESSERA_KERNEL(linear_rows_swiglu_rms_pairs_whole, Out<T, 2> y, In<T, 2> x, In<T, 1> norm_w,
               In<T, 2> w_pairs, Scalar<float> eps, Scalar<float> inv_k) {
  prefetch(w_pairs);
  const Index m = tile_index(0), j = tile_index(1);
  y.store(swiglu_of_pairs(sum(load(w_pairs, {j, 0}, {2 * Rows, Width}).template cast<float>() *
                                  whole_normed_row<Width>(x, norm_w, m, eps, inv_k),
                              1),
                          Rows)
              .template cast<T>());
};

// y [2N, K]: rows a and b interleaved (a's row i at 2i, b's at 2i + 1), one block per row pair
// and chunk of kPairChunk columns.
constexpr int kPairChunk = 1024;
template <Element T>
TESSERA_KERNEL(interleave_rows_copy, Out<T, 2> y, In<T, 2> a, In<T, 2> b) {
  const Index i = tile_index(0), c = tile_index(1);
  const int64_t cols = y.shape()[1];
  y.store_part(load(a, {i, c}, {1, cols}), {0, 0});
  y.store_part(load(b, {i, c}, {1, cols}), {1, 0});
};

// linear_rows_residual for rows of at most Width elements (the host checks K <= Width), without a
// loop: the block's three loads (the residual first: its tile is written first in the sum, which
// is commutative, so canonical_order places it ahead of the weights' rather than after the dot's
// barriers; then w's tile and x's row) are all issued before the one reduction, one wait on
// memory a block. Padded past K: zeros add nothing to the products.
template <Element T, int Rows, int Width>
TESSERA_KERNEL(linear_rows_residual_whole, Out<T, 2> y, In<T, 2> x, In<T, 2> w, In<T, 2> residual) {
  prefetch(w);
  const Index m = tile_index(0), j = tile_index(1);
  y.store((load_like(residual, y).template cast<float>() +
           sum(load(w, {j, 0}, {Rows, Width}).template cast<float>() *
                   load(x, {m, 0}, {1, Width}).template cast<float>(),
               1)
               .reshape({1, Rows}))
              .template cast<T>());
};

template <Element T, int Rows, int Chunk>
TESSERA_KERNEL(linear_rows_swiglu, Out<T, 2> y, In<T, 2> x, In<T, 2> w_gate, In<T, 2> w_up) {
  prefetch(w_gate);
  prefetch(w_up);
  const Index m = tile_index(0), j = tile_index(1);
  Tile<float> gate = Tile<float>::zeros({Rows, 1});
  Tile<float> up = Tile<float>::zeros({Rows, 1});
  const Index chunks = ((x.dim(1) + (Chunk - 1)) / Chunk).template cast<int32_t>();
  for_range(0, chunks, [&](Index k) {
    const Tile<float> xk = load(x, {m, k}, {1, Chunk}).template cast<float>();
    gate = gate + sum(load(w_gate, {j, k}, {Rows, Chunk}).template cast<float>() * xk, 1);
    up = up + sum(load(w_up, {j, k}, {Rows, Chunk}).template cast<float>() * xk, 1);
  });
  const Tile<float> g = gate.reshape({1, Rows});
  const Tile<float> u = up.reshape({1, Rows});
  y.store((g / (exp(-g) + 1.0f) * u).template cast<T>());
};

tune::Options tuning() {
  tune::Options o;
  o.time_on_cpu = false;  // the interpreter's times say nothing about a GPU's
  return o;
}

// Candidates: one row of w a block in 512-element chunks (session 10's best on every Qwen3 shape:
// the most blocks, a 1024-output layer still fills the GPU), and tiles of 4 or 8 rows of 1024 or 2
// of 2048 (one loop step for K = 1024 / 2048: every load of a block in flight at once; the planner
// gives a [4, 1024] tile four warps, a row each, 32 values a thread). The first is what the CPU
// backend runs.
#define TESSERA_LINEAR_TUNER(kernel)                                                               \
  template <Element T>                                                                             \
  const auto& kernel##_tuned() {                                                                   \
    static const auto tuner = tune::candidates(std::string("kernels.") + #kernel,                  \
                                               tune::config("1x512", kernel<T, 1, 512>, {1, 1}),   \
                                               tune::config("4x1024", kernel<T, 4, 1024>, {1, 4}), \
                                               tune::config("8x1024", kernel<T, 8, 1024>, {1, 8}), \
                                               tune::config("2x2048", kernel<T, 2, 2048>, {1, 2})) \
                                  .with_options(tuning());                                         \
    return tuner;                                                                                  \
  }
TESSERA_LINEAR_TUNER(linear_rows)
TESSERA_LINEAR_TUNER(linear_rows_residual)
TESSERA_LINEAR_TUNER(linear_rows_rms)
TESSERA_LINEAR_TUNER(linear_rows_swiglu_rms)
TESSERA_LINEAR_TUNER(linear_rows_swiglu)
#undef TESSERA_LINEAR_TUNER

// Rows of at most kWhole elements (Qwen3-0.6B's hidden size: its q/k/v, gate/up and LM head
// inputs) also try the loop-free kernels (the first, which the CPU backend runs); the loop
// kernels stay candidates. The last, w1, is a row a block: twice the blocks of w2, the winner on
// an H100 in session 20 (ncu's grids: 2048 q/k/v blocks of 64 threads, 1536 gate/up pair blocks
// of 128). With one row there is no broadcast product, so the planner sees no matrix-vector
// product: the norm's row at K = 1024 loads three rows and reduces twice, and is planned as
// LayerNorm is (64 threads, 16 elements each, loads first, a persistent grid of 12 blocks a
// multiprocessor); a pair tile ([2, 1024], x broadcast over it) is one, of 64 threads at 1024
// resident; a residual's row takes 32-128 threads (K = 1024-4096) at 768. Not yet timed on a GPU;
// checked here by running it first on the CPU backend (the kernel tests pass) and with ptxas
// (sm_90a, bf16): 69-80 registers, no spills, for the norm's rows; 76-92 bytes spilled a thread for
// a pair tile, 8-20 for a residual's.
constexpr int kWhole = 1024;
#define TESSERA_LINEAR_WHOLE_TUNER(kernel)                                         \
  template <Element T>                                                             \
  const auto& kernel##_whole_tuned() {                                             \
    static const auto tuner =                                                      \
        tune::candidates(std::string("kernels.") + #kernel + "_whole",             \
                         tune::config("w4", kernel##_whole<T, 4, kWhole>, {1, 4}), \
                         tune::config("4x1024", kernel<T, 4, 1024>, {1, 4}),       \
                         tune::config("1x512", kernel<T, 1, 512>, {1, 1}),         \
                         tune::config("w8", kernel##_whole<T, 8, kWhole>, {1, 8}), \
                         tune::config("w2", kernel##_whole<T, 2, kWhole>, {1, 2}), \
                         tune::config("w1", kernel##_whole<T, 1, kWhole>, {1, 1})) \
            .with_options(tuning());                                               \
    return tuner;                                                                  \
  }
TESSERA_LINEAR_WHOLE_TUNER(linear_rows_rms)
TESSERA_LINEAR_WHOLE_TUNER(linear_rows_swiglu_rms)
#undef TESSERA_LINEAR_WHOLE_TUNER

// Paired rows: for K <= kWhole the loop-free kernels first (the first is what the CPU backend
// runs: w2, a [4, 1024] pair tile; w4's [8, 1024] spilled ~100 bytes a thread at sm_90a under the
// planner's 85-register request of then, and asks for 64 since matrix-vector products take 1024
// resident threads), the loop's kept; longer rows the loop's.
template <Element T>
const auto& linear_rows_swiglu_rms_pairs_whole_tuned() {
  static const auto tuner =
      tune::candidates("kernels.linear_rows_swiglu_rms_pairs_whole",
                       tune::config("w2", linear_rows_swiglu_rms_pairs_whole<T, 2, kWhole>, {1, 2}),
                       tune::config("w4", linear_rows_swiglu_rms_pairs_whole<T, 4, kWhole>, {1, 4}),
                       tune::config("w8", linear_rows_swiglu_rms_pairs_whole<T, 8, kWhole>, {1, 8}),
                       tune::config("4x1024", linear_rows_swiglu_rms_pairs<T, 4, 1024>, {1, 4}),
                       tune::config("1x512", linear_rows_swiglu_rms_pairs<T, 1, 512>, {1, 1}),
                       tune::config("w1", linear_rows_swiglu_rms_pairs_whole<T, 1, kWhole>, {1, 1}))
          .with_options(tuning());
  return tuner;
}
template <Element T>
const auto& linear_rows_swiglu_rms_pairs_tuned() {
  static const auto tuner =
      tune::candidates("kernels.linear_rows_swiglu_rms_pairs",
                       tune::config("1x512", linear_rows_swiglu_rms_pairs<T, 1, 512>, {1, 1}),
                       tune::config("4x1024", linear_rows_swiglu_rms_pairs<T, 4, 1024>, {1, 4}),
                       tune::config("2x2048", linear_rows_swiglu_rms_pairs<T, 2, 2048>, {1, 2}))
          .with_options(tuning());
  return tuner;
}

// The residual's loop-free kernels, one tuner per row width (Qwen3-0.6B: K = 2048 for the o
// projection, 3072 for down; rows up to 4096), the loop kernels still candidates. A block of 2
// or 4 rows: at K = 2048 a [2, 2048] tile is 128 threads holding 32 values each, as the loop's
// 2x2048 step does, without its loop; the tuner measures which fills the GPU best. The first
// candidate is what the CPU backend runs.
template <Element T, int Width>
const auto& linear_rows_residual_whole_tuned() {
  static const auto tuner =
      tune::candidates(std::string("kernels.linear_rows_residual_whole") + std::to_string(Width),
                       tune::config("w2", linear_rows_residual_whole<T, 2, Width>, {1, 2}),
                       tune::config("w4", linear_rows_residual_whole<T, 4, Width>, {1, 4}),
                       tune::config("2x2048", linear_rows_residual<T, 2, 2048>, {1, 2}),
                       tune::config("4x1024", linear_rows_residual<T, 4, 1024>, {1, 4}),
                       tune::config("1x512", linear_rows_residual<T, 1, 512>, {1, 1}),
                       tune::config("w1", linear_rows_residual_whole<T, 1, Width>, {1, 1}))
          .with_options(tuning());
  return tuner;
}

template <Element T>
void check_weight(const char* fn, const Tensor<T, 2>& x, const char* w_name, const Tensor<T, 2>& w,
                  SourceLoc l) {
  detail::require(x.dim(1) == w.dim(1), l,
                  std::string(fn) + ": 'x' is " + to_string(x.shape()) + " and '" + w_name +
                      "' is " + to_string(w.shape()) + "; x [M, K] needs w [N, K] (nn.Linear's " +
                      "layout: one row per output)");
  detail::require_same_device(fn, w_name, w.device(), x.device(), l);
}

}  // namespace

template <Element T>
Tensor<T, 2> linear(const Tensor<T, 2>& x, const Tensor<T, 2>& w,
                    const std::optional<std::type_identity_t<Tensor<T, 2>>>& residual,
                    std::source_location l) {
  check_weight("linear", x, "w", w, l);
  const int64_t m = x.dim(0), n = w.dim(0);
  auto y = detail::new_tensor<T, 2>({m, n}, x.device(), l);
  if (m == 0 || n == 0) return y;
  if (residual) {
    detail::require_shape("linear", "residual", residual->shape(), {m, n}, l);
    detail::require_same_device("linear", "residual", residual->device(), x.device(), l);
    auto run = [&](const auto& tuner) {
      auto [y1, x1, w1, r1] = tuner(std::move(y), x, w, *residual).sync();
      return std::move(y1).unpartition();
    };
    const int64_t k = x.dim(1);
    if (k <= 1024) return run(linear_rows_residual_whole_tuned<T, 1024>());
    if (k <= 2048) return run(linear_rows_residual_whole_tuned<T, 2048>());
    if (k <= 3072) return run(linear_rows_residual_whole_tuned<T, 3072>());
    if (k <= 4096) return run(linear_rows_residual_whole_tuned<T, 4096>());
    return run(linear_rows_residual_tuned<T>());
  }
  auto [y1, x1, w1] = linear_rows_tuned<T>()(std::move(y), x, w).sync();
  return std::move(y1).unpartition();
}

template <Element T>
Tensor<T, 2> linear_rms_norm(const Tensor<T, 2>& x, const Tensor<T, 1>& norm_weight, float eps,
                             const Tensor<T, 2>& w, std::source_location l) {
  check_weight("linear_rms_norm", x, "w", w, l);
  detail::require_shape("linear_rms_norm", "norm_weight", norm_weight.shape(), {x.dim(1)}, l);
  detail::require_same_device("linear_rms_norm", "norm_weight", norm_weight.device(), x.device(),
                              l);
  const int64_t m = x.dim(0), n = w.dim(0);
  auto y = detail::new_tensor<T, 2>({m, n}, x.device(), l);
  if (m == 0 || n == 0) return y;
  const auto inv_k = static_cast<float>(1.0 / static_cast<double>(x.dim(1)));
  auto run = [&](const auto& tuner) {
    auto [y1, x1, nw1, w1, e1, k1] = tuner(std::move(y), x, norm_weight, w, eps, inv_k).sync();
    return std::move(y1).unpartition();
  };
  return x.dim(1) <= kWhole ? run(linear_rows_rms_whole_tuned<T>())
                            : run(linear_rows_rms_tuned<T>());
}

template <Element T>
Tensor<T, 2> linear_swiglu_rms_norm(const Tensor<T, 2>& x, const Tensor<T, 1>& norm_weight,
                                    float eps, const Tensor<T, 2>& w_gate, const Tensor<T, 2>& w_up,
                                    std::source_location l) {
  const char* fn = "linear_swiglu_rms_norm";
  check_weight(fn, x, "w_gate", w_gate, l);
  detail::require_shape(fn, "w_up", w_up.shape(), w_gate.shape(), l);
  detail::require_same_device(fn, "w_up", w_up.device(), x.device(), l);
  detail::require_shape(fn, "norm_weight", norm_weight.shape(), {x.dim(1)}, l);
  detail::require_same_device(fn, "norm_weight", norm_weight.device(), x.device(), l);
  const int64_t m = x.dim(0), n = w_gate.dim(0);
  auto y = detail::new_tensor<T, 2>({m, n}, x.device(), l);
  if (m == 0 || n == 0) return y;
  const auto inv_k = static_cast<float>(1.0 / static_cast<double>(x.dim(1)));
  auto run = [&](const auto& tuner) {
    auto [y1, x1, nw1, g1, u1, e1, k1] =
        tuner(std::move(y), x, norm_weight, w_gate, w_up, eps, inv_k).sync();
    return std::move(y1).unpartition();
  };
  return x.dim(1) <= kWhole ? run(linear_rows_swiglu_rms_whole_tuned<T>())
                            : run(linear_rows_swiglu_rms_tuned<T>());
}

template <Element T>
Tensor<T, 2> interleave_rows(const Tensor<T, 2>& a, const Tensor<T, 2>& b, std::source_location l) {
  const char* fn = "interleave_rows";
  detail::require_nonempty(fn, "a", a.shape(), 2, l);
  detail::require_shape(fn, "b", b.shape(), a.shape(), l);
  detail::require_same_device(fn, "b", b.device(), a.device(), l);
  const int64_t cols = std::min<int64_t>(a.dim(1), kPairChunk);
  auto [y, a1, b1] =
      interleave_rows_copy<T>(
          detail::new_tensor<T, 2>({2 * a.dim(0), a.dim(1)}, a.device(), l).partition({2, cols}), a,
          b)
          .sync();
  return std::move(y).unpartition();
}

template <Element T>
Tensor<T, 2> linear_swiglu_rms_norm_paired(const Tensor<T, 2>& x, const Tensor<T, 1>& norm_weight,
                                           float eps, const Tensor<T, 2>& w_pairs,
                                           std::source_location l) {
  const char* fn = "linear_swiglu_rms_norm_paired";
  check_weight(fn, x, "w_pairs", w_pairs, l);
  detail::require(
      w_pairs.dim(0) % 2 == 0, l,
      std::string(fn) + ": 'w_pairs' is " + to_string(w_pairs.shape()) +
          "; it holds a gate row and an up row for each output (interleave_rows(w_gate, "
          "w_up)), so an even number of rows");
  detail::require_shape(fn, "norm_weight", norm_weight.shape(), {x.dim(1)}, l);
  detail::require_same_device(fn, "norm_weight", norm_weight.device(), x.device(), l);
  const int64_t m = x.dim(0), n = w_pairs.dim(0) / 2;
  auto y = detail::new_tensor<T, 2>({m, n}, x.device(), l);
  if (m == 0 || n == 0) return y;
  const auto inv_k = static_cast<float>(1.0 / static_cast<double>(x.dim(1)));
  auto run = [&](const auto& tuner) {
    auto [y1, x1, nw1, w1, e1, k1] =
        tuner(std::move(y), x, norm_weight, w_pairs, eps, inv_k).sync();
    return std::move(y1).unpartition();
  };
  return x.dim(1) <= kWhole ? run(linear_rows_swiglu_rms_pairs_whole_tuned<T>())
                            : run(linear_rows_swiglu_rms_pairs_tuned<T>());
}

template <Element T>
Tensor<T, 2> linear_swiglu(const Tensor<T, 2>& x, const Tensor<T, 2>& w_gate,
                           const Tensor<T, 2>& w_up, std::source_location l) {
  check_weight("linear_swiglu", x, "w_gate", w_gate, l);
  detail::require_shape("linear_swiglu", "w_up", w_up.shape(), w_gate.shape(), l);
  detail::require_same_device("linear_swiglu", "w_up", w_up.device(), x.device(), l);
  const int64_t m = x.dim(0), n = w_gate.dim(0);
  auto y = detail::new_tensor<T, 2>({m, n}, x.device(), l);
  if (m == 0 || n == 0) return y;
  auto [y1, x1, g1, u1] = linear_rows_swiglu_tuned<T>()(std::move(y), x, w_gate, w_up).sync();
  return std::move(y1).unpartition();
}

#define TESSERA_LINEAR(T)                                                                       \
  template Tensor<T, 2> linear(const Tensor<T, 2>&, const Tensor<T, 2>&,                        \
                               const std::optional<Tensor<T, 2>>&, std::source_location);       \
  template Tensor<T, 2> linear_rms_norm(const Tensor<T, 2>&, const Tensor<T, 1>&, float,        \
                                        const Tensor<T, 2>&, std::source_location);             \
  template Tensor<T, 2> linear_swiglu_rms_norm(const Tensor<T, 2>&, const Tensor<T, 1>&, float, \
                                               const Tensor<T, 2>&, const Tensor<T, 2>&,        \
                                               std::source_location);                           \
  template Tensor<T, 2> linear_swiglu(const Tensor<T, 2>&, const Tensor<T, 2>&,                 \
                                      const Tensor<T, 2>&, std::source_location);               \
  template Tensor<T, 2> interleave_rows(const Tensor<T, 2>&, const Tensor<T, 2>&,               \
                                        std::source_location);                                  \
  template Tensor<T, 2> linear_swiglu_rms_norm_paired(                                          \
      const Tensor<T, 2>&, const Tensor<T, 1>&, float, const Tensor<T, 2>&, std::source_location);
TESSERA_LINEAR(float)
TESSERA_LINEAR(half)
TESSERA_LINEAR(bfloat16)

}  // namespace tessera::kernels

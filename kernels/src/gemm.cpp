// GEMM with fused epilogues: each block owns a BM x BN tile of c and loops over the K tiles with a
// loop-carried f32 accumulator (the loop the CUDA backend pipelines); the epilogue runs on the
// accumulator before the one store. Whether there is a bias or a residual changes the kernel's
// parameters, so each combination is its own kernel over one shared body. The tile shape is
// chosen per (GPU architecture, dtypes, shape bucket) by the autotuner (tessera/tune.hpp) among
// a few candidates; on the CPU backend the first candidate runs, untimed.
#include <cmath>
#include <string>

#include <tessera/tune.hpp>

#include "host.hpp"
#include "tessera/kernels/gemm.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

// a @ b for this block's [BM, BN] tile of the output, in f32.
template <int BM, int BN, int BK, Element T>
Tile<float> product(const In<T, 2>& a, const In<T, 2>& b) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({BM, BN});
  const Index k_tiles = ((a.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {BM, BK}), load(b, {k, j}, {BK, BN}), acc);
  });
  return acc;
}

template <Activation Act>
Tile<float> activate(const Tile<float>& x) {
  if constexpr (Act == Activation::relu)
    return maximum(x, 0.0f);
  else if constexpr (Act == Activation::silu)
    return x / (exp(-x) + 1.0f);
  else if constexpr (Act == Activation::gelu_tanh)
    return x * 0.5f * (tanh((x + x * x * x * 0.044715f) * 0.7978845608028654f) + 1.0f);
  else
    return x;
}

template <int BN, Element T>
Tile<float> bias_row(const In<T, 1>& bias) {
  return load(bias, {tile_index(1)}, {BN}).template cast<float>().reshape({1, BN});
}

template <Element T, Activation Act, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_plain, Out<T, 2> c, In<T, 2> a, In<T, 2> b) {
  c.store(activate<Act>(product<BM, BN, BK>(a, b)).template cast<T>());
};

template <Element T, Activation Act, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_bias, Out<T, 2> c, In<T, 2> a, In<T, 2> b, In<T, 1> bias) {
  c.store(activate<Act>(product<BM, BN, BK>(a, b) + bias_row<BN>(bias)).template cast<T>());
};

template <Element T, Activation Act, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_residual, Out<T, 2> c, In<T, 2> a, In<T, 2> b, In<T, 2> residual) {
  c.store((activate<Act>(product<BM, BN, BK>(a, b)) + load_like(residual, c).template cast<float>())
              .template cast<T>());
};

template <Element T, Activation Act, int BM, int BN, int BK>
TESSERA_KERNEL(gemm_bias_residual, Out<T, 2> c, In<T, 2> a, In<T, 2> b, In<T, 1> bias,
               In<T, 2> residual) {
  c.store((activate<Act>(product<BM, BN, BK>(a, b) + bias_row<BN>(bias)) +
           load_like(residual, c).template cast<float>())
              .template cast<T>());
};

// The candidates of each GEMM kernel: today's one tile (first: what the CPU backend runs), and
// the larger tiles the Hopper pipeline (wgmma, TMA) runs fastest at large sizes. A candidate the
// GPU cannot build (f32 operands at 128x256x64 need more shared memory than a block has) is
// skipped by the tuner.
std::string tuner_name(const char* kernel, Activation act) {
  static constexpr const char* kActs[] = {"none", "relu", "silu", "gelu_tanh"};
  return std::string("kernels.") + kernel + "." + kActs[static_cast<int>(act)];
}
tune::Options tuning() {
  tune::Options o;
  o.time_on_cpu = false;  // the interpreter's times say nothing about a GPU's
  return o;
}
#define TESSERA_GEMM_TUNER(kernel)                                                             \
  template <Element T, Activation Act>                                                         \
  const auto& kernel##_tuned() {                                                               \
    static const auto tuner =                                                                  \
        tune::candidates(tuner_name(#kernel, Act),                                             \
                         tune::config("64x64x32", kernel<T, Act, 64, 64, 32>, {64, 64}),       \
                         tune::config("128x128x32", kernel<T, Act, 128, 128, 32>, {128, 128}), \
                         tune::config("128x256x64", kernel<T, Act, 128, 256, 64>, {128, 256})) \
            .with_options(tuning());                                                           \
    return tuner;                                                                              \
  }
TESSERA_GEMM_TUNER(gemm_plain)
TESSERA_GEMM_TUNER(gemm_bias)
TESSERA_GEMM_TUNER(gemm_residual)
TESSERA_GEMM_TUNER(gemm_bias_residual)
#undef TESSERA_GEMM_TUNER

// gemm_swiglu keeps one tile: two accumulators are twice the registers of one.
constexpr int BM = 64, BN = 64, BK = 32;

template <Element T>
TESSERA_KERNEL(gemm_swiglu_tiles, Out<T, 2> y, In<T, 2> x, In<T, 2> w_gate, In<T, 2> w_up) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> gate = Tile<float>::zeros({BM, BN});
  Tile<float> up = Tile<float>::zeros({BM, BN});
  const Index k_tiles = ((x.dim(1) + (BK - 1)) / BK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    const Tile<T> xk = load(x, {i, k}, {BM, BK});
    gate = mma(xk, load(w_gate, {k, j}, {BK, BN}), gate);
    up = mma(xk, load(w_up, {k, j}, {BK, BN}), up);
  });
  y.store((activate<Activation::silu>(gate) * up).template cast<T>());
};

template <Element T>
void check_operands(const char* fn, const Tensor<T, 2>& a, const char* b_name,
                    const Tensor<T, 2>& b, SourceLoc l) {
  detail::require(a.dim(1) == b.dim(0), l,
                  std::string(fn) + ": the inner dimensions differ: 'a' is " +
                      to_string(a.shape()) + " and '" + b_name + "' is " + to_string(b.shape()) +
                      "; a [M, K] needs b [K, N]");
  detail::require_same_device(fn, b_name, b.device(), a.device(), l);
}

template <Element T>
Partition<T, 2> new_output(int64_t m, int64_t n, Device device, SourceLoc l) {
  return detail::new_tensor<T, 2>({m, n}, device, l).partition({BM, BN});
}

template <Element T, Activation Act>
Tensor<T, 2> run_gemm(const Tensor<T, 2>& a, const Tensor<T, 2>& b, const Epilogue<T>& e,
                      SourceLoc l) {
  auto c = detail::new_tensor<T, 2>({a.dim(0), b.dim(1)}, a.device(), l);
  if (e.bias && e.residual) {
    auto [c1, a1, b1, bias1, r1] =
        gemm_bias_residual_tuned<T, Act>()(std::move(c), a, b, *e.bias, *e.residual).sync();
    return std::move(c1).unpartition();
  }
  if (e.bias) {
    auto [c1, a1, b1, bias1] = gemm_bias_tuned<T, Act>()(std::move(c), a, b, *e.bias).sync();
    return std::move(c1).unpartition();
  }
  if (e.residual) {
    auto [c1, a1, b1, r1] = gemm_residual_tuned<T, Act>()(std::move(c), a, b, *e.residual).sync();
    return std::move(c1).unpartition();
  }
  auto [c1, a1, b1] = gemm_plain_tuned<T, Act>()(std::move(c), a, b).sync();
  return std::move(c1).unpartition();
}

}  // namespace

template <Element T>
Tensor<T, 2> gemm(const Tensor<T, 2>& a, const Tensor<T, 2>& b, const Epilogue<T>& e,
                  std::source_location l) {
  check_operands("gemm", a, "b", b, l);
  const int64_t m = a.dim(0), n = b.dim(1);
  if (e.bias) {
    detail::require_shape("gemm", "bias", e.bias->shape(), {n}, l);
    detail::require_same_device("gemm", "bias", e.bias->device(), a.device(), l);
  }
  if (e.residual) {
    detail::require_shape("gemm", "residual", e.residual->shape(), {m, n}, l);
    detail::require_same_device("gemm", "residual", e.residual->device(), a.device(), l);
  }
  if (m == 0 || n == 0) return detail::new_tensor<T, 2>({m, n}, a.device(), l);
  switch (e.activation) {
    case Activation::none:
      return run_gemm<T, Activation::none>(a, b, e, l);
    case Activation::relu:
      return run_gemm<T, Activation::relu>(a, b, e, l);
    case Activation::silu:
      return run_gemm<T, Activation::silu>(a, b, e, l);
    case Activation::gelu_tanh:
      return run_gemm<T, Activation::gelu_tanh>(a, b, e, l);
  }
  fail_at<UsageError>(l, "gemm: unknown activation ", static_cast<int>(e.activation));
}

template <Element T>
Tensor<T, 2> gemm_swiglu(const Tensor<T, 2>& x, const Tensor<T, 2>& w_gate,
                         const Tensor<T, 2>& w_up, std::source_location l) {
  check_operands("gemm_swiglu", x, "w_gate", w_gate, l);
  detail::require_shape("gemm_swiglu", "w_up", w_up.shape(), w_gate.shape(), l);
  detail::require_same_device("gemm_swiglu", "w_up", w_up.device(), x.device(), l);
  const int64_t m = x.dim(0), n = w_gate.dim(1);
  if (m == 0 || n == 0) return detail::new_tensor<T, 2>({m, n}, x.device(), l);
  auto [y, x1, g1, u1] =
      gemm_swiglu_tiles<T>(new_output<T>(m, n, x.device(), l), x, w_gate, w_up).sync();
  return std::move(y).unpartition();
}

#define TESSERA_GEMM(T)                                                                            \
  template Tensor<T, 2> gemm(const Tensor<T, 2>&, const Tensor<T, 2>&, const Epilogue<T>&,         \
                             std::source_location);                                                \
  template Tensor<T, 2> gemm_swiglu(const Tensor<T, 2>&, const Tensor<T, 2>&, const Tensor<T, 2>&, \
                                    std::source_location);
TESSERA_GEMM(float)
TESSERA_GEMM(half)
TESSERA_GEMM(bfloat16)

}  // namespace tessera::kernels

// Matrix multiplication with the epilogues of a transformer's linear layers fused in:
//   c = activation(a @ b + bias) + residual
// a [M, K] and b [K, N] in T (f32, f16 or bf16), products accumulated in f32, the epilogue in
// f32 and c rounded to T once. b is [K, N] (a linear layer's weight stored transposed, in the
// layout the tensor cores read without a transpose).
#pragma once

#include <optional>
#include <source_location>

#include <tessera/tessera.hpp>

namespace tessera::kernels {

enum class Activation {
  none,
  relu,       // max(x, 0)
  silu,       // x / (1 + exp(-x))
  gelu_tanh,  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
};

template <Element T>
struct Epilogue {
  std::optional<Tensor<T, 1>> bias;  // [N], added to every row before the activation
  Activation activation = Activation::none;
  std::optional<Tensor<T, 2>> residual;  // [M, N], added after the activation
};

template <Element T>
Tensor<T, 2> gemm(const Tensor<T, 2>& a, const Tensor<T, 2>& b, const Epilogue<T>& epilogue = {},
                  std::source_location l = std::source_location::current());

// The gated MLP's first half in one pass over x: silu(x @ w_gate) * (x @ w_up), both products
// accumulated in f32 in the same loop (x [M, K], w_gate and w_up [K, N]).
template <Element T>
Tensor<T, 2> gemm_swiglu(const Tensor<T, 2>& x, const Tensor<T, 2>& w_gate,
                         const Tensor<T, 2>& w_up,
                         std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

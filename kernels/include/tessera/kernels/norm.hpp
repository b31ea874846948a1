// Row normalizations over the last axis: RMSNorm and LayerNorm, each also fused with the residual
// add that precedes it in a transformer block. Inputs of any rank >= 1 (a [tokens, hidden]
// activation, or [tokens, heads, head_dim] for a per-head norm); the statistics and the scaling are
// computed in f32 from the T inputs, and the result is rounded to T once.
#pragma once

#include <source_location>

#include <tessera/tessera.hpp>

namespace tessera::kernels {

// y = x / sqrt(mean(x^2) + eps) * weight, over the last axis; weight has that axis' extent.
template <Element T, int R>
Tensor<T, R> rms_norm(const Tensor<T, R>& x, const Tensor<T, 1>& weight, float eps,
                      std::source_location l = std::source_location::current());

// Heads [first, first + count) of x [T, >= (first + count) * D] as [T, count, D], each head
// RMS-normalized with weight [D]: split_heads and the per-head QK-norm in one launch (a stacked
// q/k/v projection's q or k part).
template <Element T>
Tensor<T, 3> rms_norm_heads(const Tensor<T, 2>& x, const Tensor<T, 1>& weight, float eps,
                            int64_t first, int64_t count,
                            std::source_location l = std::source_location::current());

// y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias, over the last axis (biased variance).
template <Element T, int R>
Tensor<T, R> layer_norm(const Tensor<T, R>& x, const Tensor<T, 1>& weight, const Tensor<T, 1>& bias,
                        float eps, std::source_location l = std::source_location::current());

// A normalization fused with the residual add before it: sum = x + residual (rounded to T, the
// residual stream the next block adds to) and normed = the norm of that rounded sum.
template <Element T, int R>
struct NormedResidual {
  Tensor<T, R> normed;
  Tensor<T, R> sum;
};
template <Element T, int R>
NormedResidual<T, R> add_rms_norm(const Tensor<T, R>& x, const Tensor<T, R>& residual,
                                  const Tensor<T, 1>& weight, float eps,
                                  std::source_location l = std::source_location::current());
template <Element T, int R>
NormedResidual<T, R> add_layer_norm(const Tensor<T, R>& x, const Tensor<T, R>& residual,
                                    const Tensor<T, 1>& weight, const Tensor<T, 1>& bias, float eps,
                                    std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

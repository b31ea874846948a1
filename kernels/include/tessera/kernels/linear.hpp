// Linear layers for decode: y = x @ w^T with w [N, K] (a linear layer's weight in PyTorch's
// nn.Linear layout, each output's weights one contiguous row; also the embedding table a tied LM
// head reads), for a few rows of x. A decode step's products are matrix-vector products whose
// time is the weights' bytes, so these kernels are shaped to stream w at memory bandwidth: each
// block owns a few rows of w and reads them whole along K in wide chunks (contiguous 16-byte
// loads, many blocks in flight), where gemm's [K, N] tiles give a one-row x only
// N / tile-width blocks. Products are accumulated in f32, the result rounded to T once.
#pragma once

#include <optional>
#include <source_location>
#include <type_traits>

#include <tessera/tessera.hpp>

namespace tessera::kernels {

// x [M, K] @ w^T (w [N, K]) + residual [M, N] if given.
template <Element T>
Tensor<T, 2> linear(
    const Tensor<T, 2>& x, const Tensor<T, 2>& w,
    const std::optional<std::type_identity_t<Tensor<T, 2>>>& residual = std::nullopt,
    std::source_location l = std::source_location::current());

// rms_norm(x, norm_weight, eps) @ w^T (norm_weight [K]) in one launch: each block recomputes
// the rms of its row of x; the normalized row is rounded to T, as rms_norm's result would be.
template <Element T>
Tensor<T, 2> linear_rms_norm(const Tensor<T, 2>& x, const Tensor<T, 1>& norm_weight, float eps,
                             const Tensor<T, 2>& w,
                             std::source_location l = std::source_location::current());

// silu(rms_norm(x) @ w_gate^T) * (rms_norm(x) @ w_up^T) in one launch, the norm as in
// linear_rms_norm.
template <Element T>
Tensor<T, 2> linear_swiglu_rms_norm(const Tensor<T, 2>& x, const Tensor<T, 1>& norm_weight,
                                    float eps, const Tensor<T, 2>& w_gate, const Tensor<T, 2>& w_up,
                                    std::source_location l = std::source_location::current());

// linear_swiglu_rms_norm with the gate and up weights paired in one [2N, K] tensor, w_pairs =
// interleave_rows(w_gate, w_up) (gate row i at 2i, up row i at 2i + 1): a block reads its gate
// and up rows as one tile, so both weights' loads are issued together, before the norm (with two
// tensors the up rows' load waits for the gate's sum). The same values as the two-tensor form.
template <Element T>
Tensor<T, 2> linear_swiglu_rms_norm_paired(
    const Tensor<T, 2>& x, const Tensor<T, 1>& norm_weight, float eps, const Tensor<T, 2>& w_pairs,
    std::source_location l = std::source_location::current());

// [2N, K] from a and b [N, K]: a's row i at 2i, b's at 2i + 1 (a copy on the device).
template <Element T>
Tensor<T, 2> interleave_rows(const Tensor<T, 2>& a, const Tensor<T, 2>& b,
                             std::source_location l = std::source_location::current());

// The gated MLP's first half: silu(x @ w_gate^T) * (x @ w_up^T), w_gate and w_up [N, K], both
// products in one pass over x.
template <Element T>
Tensor<T, 2> linear_swiglu(const Tensor<T, 2>& x, const Tensor<T, 2>& w_gate,
                           const Tensor<T, 2>& w_up,
                           std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

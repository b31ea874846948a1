// Elementwise and row-wise kernels of a transformer block: the SwiGLU gate, softmax over the last
// axis, the token-embedding lookup, greedy sampling (argmax) and top-k sampling. Each allocates its
// result on the device of its first argument and returns it once the work is done.
#pragma once

#include <cstdint>
#include <source_location>

#include <tessera/tessera.hpp>

namespace tessera::kernels {

// silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise (computed in f32, rounded to T once).
// gate and up have one shape (any rank >= 1): the MLP's two projections.
template <Element T, int R>
Tensor<T, R> swiglu(const Tensor<T, R>& gate, const Tensor<T, R>& up,
                    std::source_location l = std::source_location::current());

// exp(x - max) / sum(exp(x - max)) over the last axis (computed in f32, rounded to T once).
template <Element T, int R>
Tensor<T, R> softmax(const Tensor<T, R>& x,
                     std::source_location l = std::source_location::current());

// out[i, :] = table[ids[i], :]. An id outside [0, table.dim(0)) is a BoundsError naming 'table'.
template <Element T>
Tensor<T, 2> embedding(const Tensor<T, 2>& table, const Tensor<int32_t, 1>& ids,
                       std::source_location l = std::source_location::current());

// The index of the largest element of each row of x [rows, cols] (greedy sampling over logits).
// Ties go to the smallest index; a NaN counts as larger than any number (as torch.argmax), so a
// row holding one gives the index of its first NaN.
template <Element T>
Tensor<int32_t, 1> argmax(const Tensor<T, 2>& x,
                          std::source_location l = std::source_location::current());

// Top-k sampling: for each row of logits [rows, cols], keeps the k largest (ties by index), and
// draws one of them from softmax(kept / temperature) with uniform[row] in [0, 1) as the row's
// random draw (the caller's generator, so a run can be replayed): the first kept token, in order
// of decreasing logit, whose cumulative probability exceeds uniform[row]. k in [1, kMaxTopK].
// -inf logits are never drawn; NaN logits are unspecified.
inline constexpr int kMaxTopK = 64;
template <Element T>
Tensor<int32_t, 1> top_k_sample(const Tensor<T, 2>& logits, int k, float temperature,
                                const Tensor<float, 1>& uniform,
                                std::source_location l = std::source_location::current());

}  // namespace tessera::kernels

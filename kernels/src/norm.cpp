// RMSNorm and LayerNorm, one row of the last axis per tile block (the whole row in one tile, so
// each element is read once and written once), computed in f32.
#include "tessera/kernels/norm.hpp"

#include "host.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

// The weight (or bias) vector as a [1, ..., 1, cols] f32 tile that broadcasts against a row tile.
template <Element T>
Tile<float> row_vector(const In<T, 1>& w, const Shape& row_tile) {
  Shape s(row_tile.size(), 1);
  s.back() = row_tile.back();
  // Padded: the host functions check w has the row's length (rms_norm_heads: at most it), and
  // an unpadded load would give the kernel an error report (a graph node of its own to copy).
  return load(w, {0}, {row_tile.back()}).template cast<float>().reshape(s);
}

// v * rsqrt(mean(v^2) + eps) * w over the last axis of the row tile v.
template <Element T>
Tile<float> rms_scaled(const Tile<float>& v, const In<T, 1>& w, const Tile<float>& eps) {
  const int axis = v.rank() - 1;
  const float inv_cols = 1.0f / static_cast<float>(v.shape().back());
  return v * rsqrt(sum(v * v, axis) * inv_cols + eps) * row_vector(w, v.shape());
}

// (v - mean) * rsqrt(var + eps) * w + b over the last axis (the biased variance, as torch's).
template <Element T>
Tile<float> layer_scaled(const Tile<float>& v, const In<T, 1>& w, const In<T, 1>& b,
                         const Tile<float>& eps) {
  const int axis = v.rank() - 1;
  const float inv_cols = 1.0f / static_cast<float>(v.shape().back());
  const Tile<float> d = v - sum(v, axis) * inv_cols;
  return d * rsqrt(sum(d * d, axis) * inv_cols + eps) * row_vector(w, v.shape()) +
         row_vector(b, v.shape());
}

template <Element T>
TESSERA_KERNEL(rms_norm_rows, Out<T> y, In<T> x, In<T, 1> w, Scalar<float> eps) {
  y.store(rms_scaled(load_like(x, y).template cast<float>(), w, eps).template cast<T>());
};

template <Element T>
TESSERA_KERNEL(rms_norm_heads_rows, Out<T, 3> y, In<T, 2> x, In<T, 1> w, Scalar<float> eps,
               Scalar<int32_t> first) {
  const int64_t dim = y.shape()[2];
  const Tile<float> v =
      load(x, {tile_index(0), tile_index(1) + first}, {1, dim}).template cast<float>();
  y.store(rms_scaled(v, w, eps).template cast<T>().reshape({1, 1, dim}));
};

template <Element T>
TESSERA_KERNEL(layer_norm_rows, Out<T> y, In<T> x, In<T, 1> w, In<T, 1> b, Scalar<float> eps) {
  y.store(layer_scaled(load_like(x, y).template cast<float>(), w, b, eps).template cast<T>());
};

// The residual sum is rounded to T before the norm reads it, so `normed` is exactly the norm of
// the `sum` that is handed back (what an unfused add followed by the norm computes).
template <Element T>
Tile<T> residual_sum(const In<T>& x, const In<T>& r, const Out<T>& like) {
  return (load_like(x, like).template cast<float>() + load_like(r, like).template cast<float>())
      .template cast<T>();
}

template <Element T>
TESSERA_KERNEL(add_rms_norm_rows, Out<T> y, Out<T> h, In<T> x, In<T> r, In<T, 1> w,
               Scalar<float> eps) {
  const Tile<T> s = residual_sum(x, r, h);
  h.store(s);
  y.store(rms_scaled(s.template cast<float>(), w, eps).template cast<T>());
};

template <Element T>
TESSERA_KERNEL(add_layer_norm_rows, Out<T> y, Out<T> h, In<T> x, In<T> r, In<T, 1> w, In<T, 1> b,
               Scalar<float> eps) {
  const Tile<T> s = residual_sum(x, r, h);
  h.store(s);
  y.store(layer_scaled(s.template cast<float>(), w, b, eps).template cast<T>());
};

// Checks what every norm needs: a non-empty x, vectors as long as its rows, one device.
template <Element T, int R>
void check_norm_args(const char* fn, const Tensor<T, R>& x, const Tensor<T, 1>& weight,
                     const Tensor<T, 1>* bias, const Tensor<T, R>* residual, SourceLoc l) {
  detail::require_nonempty(fn, "x", x.shape(), 1, l);
  const Shape row{x.shape().back()};
  detail::require_shape(fn, "weight", weight.shape(), row, l);
  detail::require_same_device(fn, "weight", weight.device(), x.device(), l);
  if (bias) {
    detail::require_shape(fn, "bias", bias->shape(), row, l);
    detail::require_same_device(fn, "bias", bias->device(), x.device(), l);
  }
  if (residual) {
    detail::require_shape(fn, "residual", residual->shape(), x.shape(), l);
    detail::require_same_device(fn, "residual", residual->device(), x.device(), l);
  }
}

// The row partition of a new output shaped like x.
template <Element T, int R>
Partition<T, R> new_rows(const Tensor<T, R>& x, SourceLoc l) {
  return detail::new_tensor<T, R>(x.shape(), x.device(), l).partition(detail::row_tile(x.shape()));
}

}  // namespace

template <Element T, int R>
Tensor<T, R> rms_norm(const Tensor<T, R>& x, const Tensor<T, 1>& weight, float eps,
                      std::source_location l) {
  check_norm_args<T, R>("rms_norm", x, weight, nullptr, nullptr, l);
  auto [y, x1, w1, e1] = rms_norm_rows<T>(new_rows(x, l), x, weight, eps).sync();
  return std::move(y).unpartition();
}

template <Element T>
Tensor<T, 3> rms_norm_heads(const Tensor<T, 2>& x, const Tensor<T, 1>& weight, float eps,
                            int64_t first, int64_t count, std::source_location l) {
  const char* fn = "rms_norm_heads";
  detail::require_nonempty(fn, "x", x.shape(), 2, l);
  detail::require_nonempty(fn, "weight", weight.shape(), 1, l);
  const int64_t dim = weight.dim(0);
  detail::require(first >= 0 && count > 0 && (first + count) * dim <= x.dim(1), l,
                  std::string(fn) + ": heads [" + std::to_string(first) + ", " +
                      std::to_string(first + count) + ") of " + std::to_string(dim) +
                      " elements (the weight's) do not fit rows of " + std::to_string(x.dim(1)) +
                      " elements");
  detail::require_same_device(fn, "weight", weight.device(), x.device(), l);
  auto [y, x1, w1, e1, f1] =
      rms_norm_heads_rows<T>(
          detail::new_tensor<T, 3>({x.dim(0), count, dim}, x.device(), l).partition({1, 1, dim}), x,
          weight, eps, first)
          .sync();
  return std::move(y).unpartition();
}

template <Element T, int R>
Tensor<T, R> layer_norm(const Tensor<T, R>& x, const Tensor<T, 1>& weight, const Tensor<T, 1>& bias,
                        float eps, std::source_location l) {
  check_norm_args<T, R>("layer_norm", x, weight, &bias, nullptr, l);
  auto [y, x1, w1, b1, e1] = layer_norm_rows<T>(new_rows(x, l), x, weight, bias, eps).sync();
  return std::move(y).unpartition();
}

template <Element T, int R>
NormedResidual<T, R> add_rms_norm(const Tensor<T, R>& x, const Tensor<T, R>& residual,
                                  const Tensor<T, 1>& weight, float eps, std::source_location l) {
  check_norm_args<T, R>("add_rms_norm", x, weight, nullptr, &residual, l);
  auto [y, h, x1, r1, w1, e1] =
      add_rms_norm_rows<T>(new_rows(x, l), new_rows(x, l), x, residual, weight, eps).sync();
  return {std::move(y).unpartition(), std::move(h).unpartition()};
}

template <Element T, int R>
NormedResidual<T, R> add_layer_norm(const Tensor<T, R>& x, const Tensor<T, R>& residual,
                                    const Tensor<T, 1>& weight, const Tensor<T, 1>& bias, float eps,
                                    std::source_location l) {
  check_norm_args<T, R>("add_layer_norm", x, weight, &bias, &residual, l);
  auto [y, h, x1, r1, w1, b1, e1] =
      add_layer_norm_rows<T>(new_rows(x, l), new_rows(x, l), x, residual, weight, bias, eps).sync();
  return {std::move(y).unpartition(), std::move(h).unpartition()};
}

#define TESSERA_NORMS(T, R)                                                                       \
  template Tensor<T, R> rms_norm(const Tensor<T, R>&, const Tensor<T, 1>&, float,                 \
                                 std::source_location);                                           \
  template Tensor<T, R> layer_norm(const Tensor<T, R>&, const Tensor<T, 1>&, const Tensor<T, 1>&, \
                                   float, std::source_location);                                  \
  template NormedResidual<T, R> add_rms_norm(const Tensor<T, R>&, const Tensor<T, R>&,            \
                                             const Tensor<T, 1>&, float, std::source_location);   \
  template NormedResidual<T, R> add_layer_norm(const Tensor<T, R>&, const Tensor<T, R>&,          \
                                               const Tensor<T, 1>&, const Tensor<T, 1>&, float,   \
                                               std::source_location);
#define TESSERA_NORMS_ALL_RANKS(T)                          \
  TESSERA_NORMS(T, 1)                                       \
  TESSERA_NORMS(T, 2)                                       \
  TESSERA_NORMS(T, 3) template Tensor<T, 3> rms_norm_heads( \
      const Tensor<T, 2>&, const Tensor<T, 1>&, float, int64_t, int64_t, std::source_location);
TESSERA_NORMS_ALL_RANKS(float)
TESSERA_NORMS_ALL_RANKS(half)
TESSERA_NORMS_ALL_RANKS(bfloat16)

}  // namespace tessera::kernels

// SwiGLU and softmax. SwiGLU is elementwise over tiles of up to kSpan elements of the last axis;
// softmax keeps one whole row of the last axis in a tile (one read and one write of each element).
#include <algorithm>

#include "host.hpp"
#include "tessera/kernels/elementwise.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

// The longest stretch of the last axis one SwiGLU tile block covers.
constexpr int64_t kSpan = 1024;

template <Element T>
TESSERA_KERNEL(swiglu_tiles, Out<T> y, In<T> gate, In<T> up) {
  const Tile<float> g = load_like(gate, y).template cast<float>();
  const Tile<float> u = load_like(up, y).template cast<float>();
  y.store((g / (exp(-g) + 1.0f) * u).template cast<T>());
};

template <Element T>
TESSERA_KERNEL(softmax_rows, Out<T> y, In<T> x) {
  const int axis = y.rank() - 1;
  const Tile<float> v = load_like(x, y).template cast<float>();
  const Tile<float> e = exp(v - max(v, axis));
  y.store((e / sum(e, axis)).template cast<T>());
};

}  // namespace

template <Element T, int R>
Tensor<T, R> swiglu(const Tensor<T, R>& gate, const Tensor<T, R>& up, std::source_location l) {
  detail::require_nonempty("swiglu", "gate", gate.shape(), 1, l);
  detail::require_shape("swiglu", "up", up.shape(), gate.shape(), l);
  detail::require_same_device("swiglu", "up", up.device(), gate.device(), l);
  Shape tile = detail::row_tile(gate.shape());
  tile.back() = std::min(tile.back(), kSpan);
  auto [y, g1, u1] =
      swiglu_tiles<T>(detail::new_tensor<T, R>(gate.shape(), gate.device(), l).partition(tile),
                      gate, up)
          .sync();
  return std::move(y).unpartition();
}

template <Element T, int R>
Tensor<T, R> softmax(const Tensor<T, R>& x, std::source_location l) {
  detail::require_nonempty("softmax", "x", x.shape(), 1, l);
  auto [y, x1] =
      softmax_rows<T>(
          detail::new_tensor<T, R>(x.shape(), x.device(), l).partition(detail::row_tile(x.shape())),
          x)
          .sync();
  return std::move(y).unpartition();
}

#define TESSERA_ELEMENTWISE(T, R)                                                               \
  template Tensor<T, R> swiglu(const Tensor<T, R>&, const Tensor<T, R>&, std::source_location); \
  template Tensor<T, R> softmax(const Tensor<T, R>&, std::source_location);
#define TESSERA_ELEMENTWISE_ALL_RANKS(T) \
  TESSERA_ELEMENTWISE(T, 1) TESSERA_ELEMENTWISE(T, 2) TESSERA_ELEMENTWISE(T, 3)
TESSERA_ELEMENTWISE_ALL_RANKS(float)
TESSERA_ELEMENTWISE_ALL_RANKS(half)
TESSERA_ELEMENTWISE_ALL_RANKS(bfloat16)

}  // namespace tessera::kernels

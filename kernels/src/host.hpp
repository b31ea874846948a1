// Host-side helpers shared by the kernel library's host functions: argument checks that name the
// host function, the argument and the values, and new outputs shaped like an input.
#pragma once

#include <source_location>
#include <string>
#include <utility>

#include <tessera/tessera.hpp>

namespace tessera::kernels::detail {

// A new, uninitialized tensor of `shape` on `device` (every kernel here stores all of its tiles).
template <Element T, int R>
Tensor<T, R> new_tensor(const Shape& shape, Device device, SourceLoc loc) {
  return runtime::NewTensor::allocated<Tensor<T, R>>(shape, device, loc);
}

// The tile that covers one row of the last axis: [1, ..., 1, shape.back()].
inline Shape row_tile(const Shape& shape) {
  Shape tile(shape.size(), 1);
  tile.back() = shape.back();
  return tile;
}

// A KV cache pair partitioned into the same `tile`, both or neither: when v_cache is refused,
// k_cache is handed back as it was.
template <Element T>
std::pair<Partition<T, 4>, Partition<T, 4>> partition_kv(Tensor<T, 4>& k_cache,
                                                         Tensor<T, 4>& v_cache, const Shape& tile,
                                                         std::source_location loc) {
  Partition<T, 4> k_part = std::move(k_cache).partition(tile, loc);
  try {
    Partition<T, 4> v_part = std::move(v_cache).partition(tile, loc);
    return {std::move(k_part), std::move(v_part)};
  } catch (...) {
    k_cache = std::move(k_part).unpartition();
    throw;
  }
}

// Each fails with a UsageError at the user's call, naming `fn`, the argument and the values.
void require(bool ok, SourceLoc loc, const std::string& message);
// `shape` has at least `rank` axes and at least one element.
void require_nonempty(const char* fn, const char* arg, const Shape& shape, int rank, SourceLoc loc);
void require_shape(const char* fn, const char* arg, const Shape& got, const Shape& want,
                   SourceLoc loc);
void require_same_device(const char* fn, const char* arg, Device got, Device want, SourceLoc loc);

}  // namespace tessera::kernels::detail

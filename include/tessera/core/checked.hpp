// Overflow-checked size arithmetic. Element counts, tile counts, grid extents and byte sizes are
// products of user-given extents; computed in plain int64_t or size_t they wrap for huge extents,
// and a wrapped size is an undersized allocation, a zero grid that "succeeds", or a tile that
// silently holds nothing. Every such computation goes through these, and its caller turns an
// overflow into an error that names the values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace tessera {

// a + b, a * b; nullopt when the exact result does not fit the type.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<size_t> checked_add(size_t a, size_t b) {
  size_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
inline std::optional<size_t> checked_mul(size_t a, size_t b) {
  size_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The most elements one tile may hold. A tile is one block's working set: the GPU backend
// counts a tile's elements in 32-bit loops, and the CPU backend holds it in host memory (16 bytes
// an element), so a larger tile could not run anywhere.
inline constexpr int64_t kMaxTileElements = (int64_t{1} << 31) - 1;

}  // namespace tessera

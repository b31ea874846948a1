// Shapes of tensors and tiles: a list of extents, outermost first (row-major).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

using Shape = std::vector<int64_t>;

// A rank not fixed at compile time (Tensor<T>, In<T>): it is checked at launch instead.
inline constexpr int kDynamicRank = -1;

int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "[8, 128]"
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
Shape row_major_strides(const Shape& s);

}  // namespace tessera

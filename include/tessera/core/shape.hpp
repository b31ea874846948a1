// Shapes of tensors and tiles: a list of extents, outermost first (row-major).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

using Shape = std::vector<int64_t>;

// A rank not fixed at compile time (Tensor<T>, In<T>): it is checked at launch instead.
inline constexpr int kDynamicRank = -1;

// The element count. Throws UsageError, naming the shape, when it does not fit int64_t: every
// shape a Tensor, a partition or a tile holds was checked where it was made, so this is the last
// line of defence against a wrapped count.
int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "[8, 128]"
// ceil(a / b) for a >= 0 and b > 0, without the overflow of (a + b - 1) / b near INT64_MAX.
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }
Shape row_major_strides(const Shape& s);

}  // namespace tessera

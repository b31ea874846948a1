#include "tessera/core/shape.hpp"

#include "tessera/core/checked.hpp"
#include "tessera/core/error.hpp"

namespace tessera {

int64_t numel(const Shape& s) {
  for (int64_t d : s)
    if (d == 0) return 0;  // an empty axis empties the shape, however large the others
  int64_t n = 1;
  for (int64_t d : s) {
    const std::optional<int64_t> next = checked_mul(n, d);
    if (!next)
      fail<UsageError>("the shape ", to_string(s), " has more elements than a 64-bit count holds; "
                       "use smaller extents");
    n = *next;
  }
  return n;
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  return out + "]";
}

Shape row_major_strides(const Shape& s) {
  Shape strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) strides[i - 1] = strides[i] * s[i];
  return strides;
}

}  // namespace tessera

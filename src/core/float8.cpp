#include "tessera/core/float8.hpp"

#include <ostream>

namespace tessera {
std::ostream& operator<<(std::ostream& os, float8_e4m3 h) {
  return os << static_cast<float>(h);
}
std::ostream& operator<<(std::ostream& os, float8_e5m2 h) {
  return os << static_cast<float>(h);
}
}  // namespace tessera

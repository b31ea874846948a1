#include "tessera/core/error.hpp"

namespace tessera {

std::string SourceLoc::str() const {
  return detail::cat(file, ":", line, ":", column);
}

std::string detail::located(const SourceLoc& loc, const std::string& message) {
  if (!loc.known()) return "error: " + message;
  return loc.str() + ": error: " + message;
}

}  // namespace tessera

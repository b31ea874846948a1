// Text of size relations.
#include "tessera/simt/relation.hpp"

namespace tessera::simt::detail {

const char* cmp_text(Cmp c) {
  switch (c) {
    case Cmp::Eq:
      return "==";
    case Cmp::Ne:
      return "!=";
    case Cmp::Lt:
      return "<";
    case Cmp::Le:
      return "<=";
    case Cmp::Gt:
      return ">";
    case Cmp::Ge:
      return ">=";
  }
  return "?";
}

}  // namespace tessera::simt::detail

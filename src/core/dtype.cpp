#include "tessera/core/dtype.hpp"

namespace tessera {

std::string_view dtype_name(DType t) {
  switch (t) {
#define TESSERA_DTYPE(E, name, bytes, cls) \
  case DType::E:                           \
    return name;
#include "tessera/core/dtypes.def"
#undef TESSERA_DTYPE
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
#define TESSERA_DTYPE(E, name, bytes, cls) \
  case DType::E:                           \
    return bytes;
#include "tessera/core/dtypes.def"
#undef TESSERA_DTYPE
  }
  return 0;
}

DTypeClass dtype_class(DType t) {
  switch (t) {
#define TESSERA_DTYPE(E, name, bytes, cls) \
  case DType::E:                           \
    return DTypeClass::cls;
#include "tessera/core/dtypes.def"
#undef TESSERA_DTYPE
  }
  return DTypeClass::Int;
}

bool is_signed_int(DType t) { return is_int(t) && t != DType::U8; }

}  // namespace tessera

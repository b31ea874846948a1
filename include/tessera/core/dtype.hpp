// Element types. The list lives in dtypes.def; this header expands it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tessera/core/float8.hpp"
#include "tessera/core/half.hpp"

namespace tessera {

enum class DType : uint8_t {
#define TESSERA_DTYPE(E, name, bytes, cls) E,
#include "tessera/core/dtypes.def"
#undef TESSERA_DTYPE
};

enum class DTypeClass : uint8_t { Bool, Int, Float };

std::string_view dtype_name(DType t);
size_t dtype_size(DType t);
DTypeClass dtype_class(DType t);
inline bool is_float(DType t) { return dtype_class(t) == DTypeClass::Float; }
inline bool is_int(DType t) { return dtype_class(t) == DTypeClass::Int; }
bool is_signed_int(DType t);
// The 8-bit floats: storage only, no arithmetic (cast to f16/f32 first).
inline bool is_fp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }

// The C++ element type of each dtype, and back.
template <class T>
struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = DType::Bool; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::I8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::I16; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::I64; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::U8; };
template <> struct dtype_of<half> { static constexpr DType value = DType::F16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::BF16; };
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<float8_e4m3> { static constexpr DType value = DType::F8E4M3; };
template <> struct dtype_of<float8_e5m2> { static constexpr DType value = DType::F8E5M2; };

template <class T>
concept Element = requires { dtype_of<T>::value; };

template <Element T>
inline constexpr DType dtype_v = dtype_of<T>::value;

}  // namespace tessera

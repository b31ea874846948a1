// The dtype table (dtypes.def) and the C++ element types that map onto it.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tessera/core/dtype.hpp"

namespace tessera {
namespace {

struct Row {
  DType dtype;
  const char* name;
  size_t bytes;
  DTypeClass cls;
  bool signed_int;
};

// Written out by hand, not expanded from dtypes.def, so a wrong row in the table shows up here.
const Row kRows[] = {
    {DType::Bool, "bool", 1, DTypeClass::Bool, false},
    {DType::I8, "i8", 1, DTypeClass::Int, true},
    {DType::I16, "i16", 2, DTypeClass::Int, true},
    {DType::I32, "i32", 4, DTypeClass::Int, true},
    {DType::I64, "i64", 8, DTypeClass::Int, true},
    {DType::U8, "u8", 1, DTypeClass::Int, false},
    {DType::F16, "f16", 2, DTypeClass::Float, false},
    {DType::BF16, "bf16", 2, DTypeClass::Float, false},
    {DType::F32, "f32", 4, DTypeClass::Float, false},
    {DType::F64, "f64", 8, DTypeClass::Float, false},
    {DType::F8E4M3, "f8e4m3", 1, DTypeClass::Float, false},
    {DType::F8E5M2, "f8e5m2", 1, DTypeClass::Float, false},
};

TEST(DType, TableGivesNameSizeAndClassOfEveryDType) {
  for (const Row& r : kRows) {
    SCOPED_TRACE(r.name);
    EXPECT_EQ(dtype_name(r.dtype), r.name);
    EXPECT_EQ(dtype_size(r.dtype), r.bytes);
    EXPECT_EQ(dtype_class(r.dtype), r.cls);
    EXPECT_EQ(is_float(r.dtype), r.cls == DTypeClass::Float);
    EXPECT_EQ(is_int(r.dtype), r.cls == DTypeClass::Int);
    EXPECT_EQ(is_signed_int(r.dtype), r.signed_int);
  }
}

TEST(DType, TableCoversEveryEnumeratorOnceWithDistinctNames) {
  std::set<std::string> names;
  int rows = 0;
#define TESSERA_DTYPE(E, name, bytes, cls) \
  ++rows;                                  \
  names.insert(name);
#include "tessera/core/dtypes.def"
#undef TESSERA_DTYPE
  EXPECT_EQ(rows, static_cast<int>(std::size(kRows)));
  EXPECT_EQ(names.size(), std::size(kRows));
}

TEST(DType, ElementTypesMapToTheirDTypeAndSize) {
  static_assert(dtype_v<bool> == DType::Bool);
  static_assert(dtype_v<int8_t> == DType::I8);
  static_assert(dtype_v<int16_t> == DType::I16);
  static_assert(dtype_v<int32_t> == DType::I32);
  static_assert(dtype_v<int64_t> == DType::I64);
  static_assert(dtype_v<uint8_t> == DType::U8);
  static_assert(dtype_v<half> == DType::F16);
  static_assert(dtype_v<bfloat16> == DType::BF16);
  static_assert(dtype_v<float> == DType::F32);
  static_assert(dtype_v<double> == DType::F64);
  static_assert(dtype_v<float8_e4m3> == DType::F8E4M3 && dtype_v<float8_e5m2> == DType::F8E5M2);
  static_assert(!Element<char32_t> && !Element<long double>);
  // A tensor's bytes are the element type's bytes on the host: the sizes agree.
  EXPECT_EQ(dtype_size(dtype_v<half>), sizeof(half));
  EXPECT_EQ(dtype_size(dtype_v<bfloat16>), sizeof(bfloat16));
  EXPECT_EQ(dtype_size(dtype_v<int64_t>), sizeof(int64_t));
  EXPECT_EQ(dtype_size(dtype_v<bool>), sizeof(bool));
}

}  // namespace
}  // namespace tessera

// Scalar element conversions of the CPU backend: reading and writing typed memory, and rounding a
// value to what a dtype can hold.
//
// The backend holds every element as a Value, an extended-precision long double whose 64-bit
// significand holds every integer of |n| <= 2^64 exactly: an i64 above 2^53 survives a copy, the
// sum or difference of two i64 values is exact before it wraps, and doubles, floats and halves
// are held exactly too. Integer results wrap modulo 2^width (two's complement), as on the GPU.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "tessera/core/dtype.hpp"

namespace tessera::backend::cpu {

using Value = long double;
static_assert(std::numeric_limits<Value>::digits >= 64,
              "the CPU backend holds i64 values exactly in a long double with a 64-bit (or wider) "
              "significand; on this platform it has fewer bits");

// x rounded to the nearest value of dtype t (floats), or truncated and wrapped modulo 2^width
// (integers; a value beyond +-2^64, which no integer op produces, saturates to int64 first).
Value round_to(DType t, Value x);
// An IR constant (a double attribute) as dtype t: integers saturate to int64, then wrap to the
// width, as the CUDA backend prints them.
Value constant_to(DType t, double x);
// x of dtype `from` converted to dtype `to`, as a cast does.
Value convert(DType from, DType to, Value x);
Value read_element(const void* base, DType t, int64_t offset);
void write_element(void* base, DType t, int64_t offset, Value x);
std::string format_element(DType t, Value x);

}  // namespace tessera::backend::cpu

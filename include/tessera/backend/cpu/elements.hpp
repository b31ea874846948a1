// Scalar element conversions of the CPU backend: reading and writing typed memory, and rounding a
// double to what a dtype can hold.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/core/dtype.hpp"

namespace tessera::backend::cpu {

// x rounded to the nearest value of dtype t (floats), or truncated and wrapped (integers).
double round_to(DType t, double x);
// x of dtype `from` converted to dtype `to`, as a cast does.
double convert(DType from, DType to, double x);
double read_element(const void* base, DType t, int64_t offset);
void write_element(void* base, DType t, int64_t offset, double x);
std::string format_element(DType t, double x);

}  // namespace tessera::backend::cpu

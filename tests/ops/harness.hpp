// The harness of the per-op tests. Every op runs through a real launch on the CPU backend and is
// compared with a double-precision reference computed here, on fresh random inputs.
//
// Tensors live in host buffers with a guard band around them on every axis (Guarded<T>), passed
// to kernels as strided views. Input guards hold NaN (floats) or -1 (integers), so a load that
// reads past a tensor's edge instead of padding shows up in the result; output buffers are
// poison-filled, so the check that follows every launch sees both that each element inside the
// output was written and that nothing outside it was.
//
// With TESSERA_TEST_DEVICE=cuda the same tests run every kernel on the GPU instead (label gpu):
// each Guarded buffer, guards included, is mirrored in device memory, copied there when a view is
// taken and back before the host reads it, so the guards check GPU stores just as they do CPU ones.
//
// A test is a row of a table (Case: a name and a function of the random source). Each file builds
// its rows from templates over ops and dtypes and instantiates OpTest with them, so one row is
// one CTest test, named after what it runs ("add_f16_tile_scalar").
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::test {

// ---- random inputs -----------------------------------------------------------------------------

// The random source of one test. The seed comes from TESSERA_TEST_SEED when it is set, else from
// std::random_device; OpTest prints it with every failure so that a failing run can be replayed.
class Rng {
 public:
  Rng();
  uint32_t seed() const { return seed_; }
  double uniform(double lo, double hi);
  int64_t integer(int64_t lo, int64_t hi);  // inclusive
  bool coin() { return integer(0, 1) == 1; }
  // An extent that is not a multiple of `tile` (unless tile is 1): between one and `max_tiles`
  // whole tiles, plus a ragged remainder.
  int64_t ragged(int64_t tile, int64_t max_tiles);

 private:
  uint32_t seed_;
  std::mt19937 engine_;
};

// ---- host conversions --------------------------------------------------------------------------

// Reading and writing elements on the host, for inputs and results (the reference never rounds
// through these: see round_to_format).
template <Element T>
double to_double(T v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<double>(v);
  else
    return static_cast<double>(static_cast<float>(v));
}
template <Element T>
T from_double(double v) {
  if constexpr (std::is_arithmetic_v<T>)
    return static_cast<T>(v);
  else
    return T(static_cast<float>(v));
}

template <Element T>
inline constexpr bool is_float_v = !std::is_integral_v<T>;

template <Element T>
std::string dtype_tag() {
  return std::string(dtype_name(dtype_v<T>));
}

// ---- the reference -----------------------------------------------------------------------------

// x rounded to nearest-even in a binary floating-point format with `precision` significant bits,
// whose normal numbers have frexp exponents >= min_exponent and whose largest finite value is
// max_finite; results past it are infinities. Written from the IEEE rules, independently of the
// conversions Tessera itself uses.
double round_to_format(double x, int precision, int min_exponent, double max_finite);

// The value a cast to T gives for x: floats round to nearest even (overflow is infinity);
// integers truncate toward zero and saturate, and NaN becomes 0.
template <Element T>
double cast_reference(double x);

// The largest relative error a result of dtype T may have: a little more than the rounding of
// one operation (f32 1e-6, f16 1e-3, bf16 1e-2, f64 1e-12), and 0 for integers (exact).
template <Element T>
double default_rtol() {
  if constexpr (std::is_same_v<T, float>)
    return 1e-6;
  else if constexpr (std::is_same_v<T, double>)
    return 1e-12;
  else if constexpr (std::is_same_v<T, half>)
    return 1e-3;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 1e-2;
  else
    return 0;
}

// Calls f(index) for every multi-index of `shape`, in row-major order.
void for_each_index(const Shape& shape, const std::function<void(const Shape&)>& f);

// ---- guarded tensors ---------------------------------------------------------------------------

// Where the kernels of the op tests run: TESSERA_TEST_DEVICE (cpu when unset).
Device test_device();

// A tensor of `shape` that lives inside a larger host buffer: kGuardBefore elements before it
// and kGuardAfter after it along every axis. view() is a strided Tensor over the inside, and the
// only handle to its storage, so it can be partitioned.
template <Element T>
class Guarded {
 public:
  static constexpr int64_t kGuardBefore = 1, kGuardAfter = 17;
  enum class Fill { Input, Output };

  Guarded(Shape shape, Fill fill);
  ~Guarded();
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;

  const Shape& shape() const { return shape_; }
  double at(const Shape& idx) const {
    pull();
    return to_double(buf_[offset(idx)]);
  }
  // Sets every element inside to f(index), converted to T.
  void fill(const std::function<double(const Shape&)>& f);
  // Elements drawn uniformly from [lo, hi] (integers for integer T).
  void fill_uniform(Rng& rng, double lo, double hi);

  // A new view of the inside (a fresh storage each call, so each is the only handle to it), on
  // test_device().
  Tensor<T> view();
  // Whether every byte outside the inside still holds the fill pattern; `where` names the first
  // changed element.
  bool guard_intact(std::string* where) const;

 private:
  int64_t offset(const Shape& idx) const;
  // On the GPU: brings the host buffer up to date with the device mirror, which a kernel may
  // have written since the last view().
  void pull() const;

  Shape shape_, outer_, outer_strides_;
  mutable std::vector<T> buf_;
  unsigned char pattern_;
  Device device_;
  void* mirror_ = nullptr;             // the device copy of buf_ (GPU only)
  mutable bool mirror_newer_ = false;  // a view was handed out since the last pull
  bool host_newer_ = true;             // buf_ changed since the last copy to the mirror
};

using IndexFn = std::function<double(const Shape&)>;

// Expects every element of `out` to be within rtol of want(index), relative to scale(index)
// (default: max(|want|, 1e-3)); NaN matches NaN, and integers (rtol 0) must be exact. Also
// expects the guard around `out` to be intact: a store wrote nothing outside its tensor.
template <Element T>
void expect_matches(const Guarded<T>& out, const IndexFn& want, double rtol,
                    const IndexFn& scale = nullptr);

// ---- the table ---------------------------------------------------------------------------------

struct Case {
  std::string name;
  std::function<void(Rng&)> run;
};

class OpTest : public ::testing::TestWithParam<Case> {};

std::string case_name(const ::testing::TestParamInfo<Case>& info);
// Names a row in GoogleTest's messages.
inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

// Registers a file's rows (a std::vector<Case>) as OpTest tests named <suite>/OpTest.../<row>.
#define TESSERA_OP_CASES(suite, rows) \
  INSTANTIATE_TEST_SUITE_P(suite, OpTest, ::testing::ValuesIn(rows), ::tessera::test::case_name)

}  // namespace tessera::test

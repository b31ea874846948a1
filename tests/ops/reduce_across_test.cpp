// Reductions along a non-last axis at the tile shapes kernels use (a [32, 128] or [256, 128]
// column sum: P·V over key positions, the combine of split chunks), along the middle axis of a
// rank-3 tile, and along lines that are not a power of two of vectors ([20, 12] along 0, [4, 24]
// along 1): the shapes whose GPU lowering splits the axis among the threads (registers or a
// staged tile, then a tree); and a short line ([6, 12] along 0) that one thread still walks.
// Inputs have ragged edges, loaded with the reduction's neutral pad; max sees a NaN in about one
// element of 50 (the line's result is then NaN). Integer sums and products wrap and max/min/any
// select, so the GPU's order cannot change them: the GPU run of these tests (gpu.ops_tests)
// compares them exactly, floats within f32 summation error.
#include <algorithm>
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

struct Sum {
  static constexpr const char* name = "sum";
  static Pad pad() { return Pad::zero(); }
  template <Element T>
  static double x(Rng& r) {
    return is_float_v<T> ? r.uniform(-10, 10) : static_cast<double>(r.integer(-1000, 1000));
  }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return sum(t, axis);
  }
  static double combine(double acc, double x) { return acc + x; }
  static constexpr double init = 0;
};
struct Max {
  static constexpr const char* name = "max";
  static Pad pad() { return Pad::neg_inf(); }
  template <Element T>
  static double x(Rng& r) {
    if (is_float_v<T> && r.integer(0, 49) == 0) return NAN;
    return is_float_v<T> ? r.uniform(-100, -1) : static_cast<double>(r.integer(-1000, -1));
  }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return max(t, axis);
  }
  static double combine(double acc, double x) {
    return std::isnan(acc) || std::isnan(x) ? NAN : std::max(acc, x);
  }
  static constexpr double init = -INFINITY;
};
struct Min {
  static constexpr const char* name = "min";
  static Pad pad() { return Pad::value_of(INFINITY); }
  template <Element T>
  static double x(Rng& r) {
    return is_float_v<T> ? r.uniform(1, 100) : static_cast<double>(r.integer(1, 1000));
  }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return min(t, axis);
  }
  static double combine(double acc, double x) { return std::min(acc, x); }
  static constexpr double init = INFINITY;
};
// Products near 1 in magnitude (floats), or of small integers that wrap (i32).
struct Prod {
  static constexpr const char* name = "prod";
  static Pad pad() { return Pad::value_of(1); }
  template <Element T>
  static double x(Rng& r) {
    if constexpr (is_float_v<T>)
      return (r.integer(0, 3) == 0 ? -1 : 1) * r.uniform(0.97, 1.03);
    else
      return static_cast<double>(r.integer(-9, 9));
  }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return prod(t, axis);
  }
  static double combine(double acc, double x) { return acc * x; }
  static constexpr double init = 1;
};
// any(x > 0) as 0/1 of T: mostly negative values, so a line is true only where one is positive.
struct Any {
  static constexpr const char* name = "any";
  static Pad pad() { return Pad::zero(); }
  template <Element T>
  static double x(Rng& r) {
    return r.integer(0, 299) == 0 ? 1 : -1;
  }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return any(t > T(0), axis).template cast<T>();
  }
  static double combine(double acc, double x) { return acc != 0 || x > 0 ? 1 : 0; }
  static constexpr double init = 0;
};

template <class Op, Element T, int Axis, int64_t... Tile>
TESSERA_KERNEL(reduce_across_kernel, Out<T> z, In<T> x) {
  constexpr int64_t tile[] = {Tile...};
  Shape in_tile = z.shape();
  in_tile[Axis] = tile[Axis];
  if constexpr (sizeof...(Tile) == 2)
    z.store(Op::dsl(load(x, {tile_index(0), tile_index(1)}, in_tile, Op::pad()), Axis));
  else
    z.store(
        Op::dsl(load(x, {tile_index(0), tile_index(1), tile_index(2)}, in_tile, Op::pad()), Axis));
};

template <class Op, Element T, int Axis, int64_t... Tile>
void run(Rng& rng) {
  const Shape tile{Tile...};
  const int64_t extent = tile[Axis];
  Shape shape, out_shape, out_tile = tile;
  for (int64_t t : tile) shape.push_back(rng.ragged(t, 2));
  out_shape = shape;
  out_shape[Axis] = ceil_div(shape[Axis], extent);
  out_tile[Axis] = 1;

  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill([&](const Shape&) { return Op::template x<T>(rng); });
  Guarded<T> z(out_shape, Guarded<T>::Fill::Output);
  (void)reduce_across_kernel<Op, T, Axis, Tile...>(z.view().partition(out_tile), x.view()).sync();

  // Output element o reduces its tile's extent along the axis, clipped at the tensor's edge.
  auto fold = [&](const Shape& o, auto f, double init) {
    Shape i = o;
    double acc = init;
    const int64_t begin = o[Axis] * extent, end = std::min(begin + extent, shape[Axis]);
    for (i[Axis] = begin; i[Axis] < end; ++i[Axis]) acc = f(acc, x.at(i));
    return acc;
  };
  const IndexFn want = [&](const Shape& o) {
    if constexpr (std::is_same_v<Op, Prod> && !is_float_v<T>) {  // wraps: in 64 bits, then T's
      uint64_t p = 1;
      fold(
          o,
          [&](double a, double v) {
            p *= static_cast<uint64_t>(static_cast<int64_t>(v));
            return a;
          },
          0.0);
      return static_cast<double>(static_cast<T>(p));
    }
    return fold(o, Op::combine, Op::init);
  };
  const IndexFn scale = [&](const Shape& o) {  // sums may cancel: relative to the sum of |x|
    return std::fmax(fold(
                         o, [](double a, double v) { return a + std::fabs(v); }, 0.0),
                     1e-3);
  };
  // The GPU accumulates f16/bf16/f32 in f32 in its own order: up to `extent` roundings of f32.
  const double rtol =
      is_float_v<T> ? std::max(default_rtol<T>(), static_cast<double>(extent) * 0x1p-24) : 0;
  if constexpr (std::is_same_v<Op, Sum>)
    expect_matches(z, want, rtol, scale);
  else
    expect_matches(z, want, rtol);
}

template <class Op, Element T>
void add_shapes(std::vector<Case>& rows) {
  const std::string base = std::string(Op::name) + "_" + dtype_tag<T>();
  rows.push_back({base + "_32x128_axis0", run<Op, T, 0, 32, 128>});
  rows.push_back({base + "_256x128_axis0", run<Op, T, 0, 256, 128>});
  rows.push_back({base + "_4x8x16_axis1", run<Op, T, 1, 4, 8, 16>});
  rows.push_back({base + "_8x1024_axis0", run<Op, T, 0, 8, 1024>});
  rows.push_back({base + "_20x12_axis0", run<Op, T, 0, 20, 12>});
  rows.push_back({base + "_4x24_axis1", run<Op, T, 1, 4, 24>});
  rows.push_back({base + "_6x12_axis0", run<Op, T, 0, 6, 12>});
}

template <class Op>
void add_dtypes(std::vector<Case>& rows) {
  add_shapes<Op, float>(rows);
  add_shapes<Op, half>(rows);
  add_shapes<Op, bfloat16>(rows);
  add_shapes<Op, int32_t>(rows);
}

std::vector<Case> reduce_across_rows() {
  std::vector<Case> rows;
  add_dtypes<Sum>(rows);
  add_dtypes<Max>(rows);
  add_dtypes<Min>(rows);
  add_shapes<Prod, float>(rows);
  add_shapes<Prod, int32_t>(rows);
  add_shapes<Any, float>(rows);
  add_shapes<Any, int32_t>(rows);
  return rows;
}

TESSERA_OP_CASES(ReduceAcross, reduce_across_rows());

}  // namespace
}  // namespace tessera::test

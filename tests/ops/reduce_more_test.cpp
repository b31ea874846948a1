// The reductions that joined sum/max/min, along each axis of rank-2 tiles (and along axis -1) from
// tensors with ragged edges: prod (floats near 1, integers that wrap), any and all (of a
// comparison, with the pad that keeps elements past the edge out), and argmax / argmin (small
// integers, so ties are common and the first index must win; NaNs in float tiles, the first
// of which wins).
#include <algorithm>
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// The tile at this block's coordinate of a rank-2 input, of `shape`.
template <Element T>
Tile<T> load_here(const In<T>& x, const Shape& shape, Pad pad) {
  return load(x, {tile_index(0), tile_index(1)}, shape, pad);
}

// A [8, 16] tile reduced along Axis into the output tile of extent 1 along it.
constexpr int64_t kTile[] = {8, 16};

struct Prod {
  static constexpr const char* name = "prod";
  template <Element T>
  static double x(Rng& r) {
    if constexpr (is_float_v<T>)
      return (r.integer(0, 3) == 0 ? -1 : 1) * r.uniform(0.7, 1.4);
    else
      return static_cast<double>(r.integer(-9, 9));  // 9^16 wraps in i32
  }
  static Pad pad() { return Pad::value_of(1); }
  template <Element T>
  static auto dsl(const Tile<T>& t, int axis) {
    return prod(t, axis);
  }
};
// any(x > 0) of x mostly <= 0; all(x >= 0) of x mostly >= 0. The pad, 0, changes neither.
struct Any {
  static constexpr const char* name = "any";
  template <Element T>
  static double x(Rng& r) {
    return static_cast<double>(r.integer(-30, 1));
  }
  static Pad pad() { return Pad::zero(); }
  template <Element T>
  static auto dsl(const Tile<T>& t, int axis) {
    return any(t > T(0), axis).template cast<int32_t>();
  }
};
struct All {
  static constexpr const char* name = "all";
  template <Element T>
  static double x(Rng& r) {
    return static_cast<double>(r.integer(-1, 30));
  }
  static Pad pad() { return Pad::zero(); }
  template <Element T>
  static auto dsl(const Tile<T>& t, int axis) {
    return all(t >= T(0), axis).template cast<int32_t>();
  }
};
// Values in [-3, 3] (ties), and in float tiles a NaN in one element of 40.
template <bool Max>
struct ArgBest {
  static constexpr const char* name = Max ? "argmax" : "argmin";
  template <Element T>
  static double x(Rng& r) {
    if (is_float_v<T> && r.integer(0, 39) == 0) return NAN;
    return static_cast<double>(r.integer(-3, 3));
  }
  static Pad pad() { return Max ? Pad::neg_inf() : Pad::value_of(INFINITY); }
  template <Element T>
  static auto dsl(const Tile<T>& t, int axis) {
    if constexpr (Max)
      return argmax(t, axis);
    else
      return argmin(t, axis);
  }
};

template <class Op, Element T>
using result_t = std::conditional_t<std::is_same_v<Op, Prod>, T, int32_t>;

template <class Op, Element T, int Axis>
TESSERA_KERNEL(reduce_more_kernel, Out<result_t<Op, T>> z, In<T> x) {
  Shape in_tile = z.shape();
  in_tile[(Axis + 2) % 2] = kTile[(Axis + 2) % 2];
  z.store(Op::dsl(load_here(x, in_tile, Op::pad()), Axis));
};

// The reference of one output element from the elements of x it covers (in order).
template <class Op, Element T>
double reference(const std::vector<double>& v) {
  if constexpr (std::is_same_v<Op, Prod>) {
    if constexpr (is_float_v<T>) {
      double p = 1;
      for (double e : v) p *= e;
      return p;
    } else {
      uint64_t p = 1;
      for (double e : v) p *= static_cast<uint64_t>(static_cast<int64_t>(e));
      return static_cast<double>(static_cast<T>(p));  // wraps
    }
  } else if constexpr (std::is_same_v<Op, Any>) {
    return std::any_of(v.begin(), v.end(), [](double e) { return e > 0; }) ? 1 : 0;
  } else if constexpr (std::is_same_v<Op, All>) {
    return std::all_of(v.begin(), v.end(), [](double e) { return e >= 0; }) ? 1 : 0;
  } else {
    const bool max = std::is_same_v<Op, ArgBest<true>>;
    size_t at = 0;
    for (size_t j = 1; j < v.size() && !std::isnan(v[at]); ++j)
      if (std::isnan(v[j]) || (max ? v[j] > v[at] : v[j] < v[at])) at = j;
    return static_cast<double>(at);
  }
}

template <class Op, Element T, int Axis>
void run_reduce_more(Rng& rng) {
  using R = result_t<Op, T>;
  constexpr int axis = (Axis + 2) % 2;
  const Shape tile{kTile[0], kTile[1]};
  const Shape shape{rng.ragged(kTile[0], 3), rng.ragged(kTile[1], 3)};
  Shape out_shape = shape, out_tile = tile;
  out_shape[axis] = ceil_div(shape[axis], kTile[axis]);
  out_tile[axis] = 1;
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill([&](const Shape&) { return Op::template x<T>(rng); });
  Guarded<R> z(out_shape, Guarded<R>::Fill::Output);
  (void)reduce_more_kernel<Op, T, Axis>(z.view().partition(out_tile), x.view()).sync();

  // The elements of x that output element o covers: its tile's extent along the axis, clipped.
  const IndexFn want = [&](const Shape& o) {
    Shape i = o;
    std::vector<double> v;
    const int64_t begin = o[axis] * kTile[axis], end = std::min(begin + kTile[axis], shape[axis]);
    for (i[axis] = begin; i[axis] < end; ++i[axis]) v.push_back(x.at(i));
    return reference<Op, T>(v);
  };
  // f32 products round at each of up to 16 steps on the GPU.
  expect_matches(z, want, is_float_v<R> ? 4 * default_rtol<R>() : 0);
}

template <class Op, Element... Ts>
void add_rows(std::vector<Case>& rows) {
  (
      [&] {
        const std::string base = std::string(Op::name) + "_" + dtype_tag<Ts>();
        rows.push_back({base + "_axis0", run_reduce_more<Op, Ts, 0>});
        rows.push_back({base + "_axis1", run_reduce_more<Op, Ts, 1>});
        rows.push_back({base + "_axis_minus1", run_reduce_more<Op, Ts, -1>});
      }(),
      ...);
}

std::vector<Case> reduce_more_rows() {
  std::vector<Case> rows;
  add_rows<Prod, float, half, bfloat16, double, int32_t>(rows);
  add_rows<Any, float, int32_t>(rows);
  add_rows<All, float, int32_t>(rows);
  add_rows<ArgBest<true>, float, half, bfloat16, double, int32_t, int64_t>(rows);
  add_rows<ArgBest<false>, float, half, bfloat16, double, int32_t, int64_t>(rows);
  return rows;
}

TESSERA_OP_CASES(ReduceMore, reduce_more_rows());

}  // namespace
}  // namespace tessera::test

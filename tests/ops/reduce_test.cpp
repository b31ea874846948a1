// Reductions sum/max/min along each axis of rank-2 and rank-3 tiles (and along axis -1), the tile
// loaded with the pad that is neutral for the reduction (0, -inf, +inf), from tensors with ragged
// edges. Max sees only negative values and min only positive ones, so a pad that is not neutral
// (0, or an element past the edge) would win somewhere.
#include <algorithm>
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

struct Sum {
  static constexpr const char* name = "sum";
  static constexpr double low = -10, high = 10, init = 0;
  static Pad pad() { return Pad::zero(); }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return tessera::tile::sum(t, axis);
  }
  static double combine(double acc, double x) { return acc + x; }
};
struct Max {
  static constexpr const char* name = "max";
  static constexpr double low = -100, high = -1, init = -INFINITY;
  static Pad pad() { return Pad::neg_inf(); }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return tessera::tile::max(t, axis);
  }
  static double combine(double acc, double x) { return std::max(acc, x); }
};
struct Min {
  static constexpr const char* name = "min";
  static constexpr double low = 1, high = 100, init = INFINITY;
  static Pad pad() { return Pad::value_of(INFINITY); }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis) {
    return tessera::tile::min(t, axis);
  }
  static double combine(double acc, double x) { return std::min(acc, x); }
};

// The tile at this block's coordinate, of `shape`, from a rank-2 or rank-3 input.
template <int Rank, Element T>
Tile<T> load_here(const In<T>& x, const Shape& shape, Pad pad) {
  if constexpr (Rank == 2)
    return load(x, {tile_index(0), tile_index(1)}, shape, pad);
  else
    return load(x, {tile_index(0), tile_index(1), tile_index(2)}, shape, pad);
}

// Each block reduces its input tile (`Extent` along the reduced axis) into an output tile whose
// extent along that axis is 1.
template <class Op, Element T, int Rank, int Axis, int Extent>
TESSERA_KERNEL(reduce_kernel, Out<T> z, In<T> x) {
  Shape in_tile = z.shape();
  in_tile[(Axis + Rank) % Rank] = Extent;
  z.store(Op::dsl(load_here<Rank>(x, in_tile, Op::pad()), Axis));
};

template <class Op, Element T, int Rank, int Axis>
void run_reduce(Rng& rng) {
  constexpr int axis = (Axis + Rank) % Rank;
  const Shape tile = Rank == 2 ? Shape{8, 16} : Shape{4, 6, 8};
  constexpr int kExtent = Rank == 2 ? (axis == 0 ? 8 : 16) : (axis == 0 ? 4 : axis == 1 ? 6 : 8);
  Shape shape, out_shape, out_tile = tile;
  for (int64_t t : tile) shape.push_back(rng.ragged(t, 3));
  out_shape = shape;
  out_shape[axis] = ceil_div(shape[axis], kExtent);
  out_tile[axis] = 1;

  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, Op::low, Op::high);
  Guarded<T> z(out_shape, Guarded<T>::Fill::Output);
  (void)reduce_kernel<Op, T, Rank, Axis, kExtent>(z.view().partition(out_tile), x.view()).sync();

  // The elements of x that output element o reduces: its tile's extent along the axis, clipped.
  auto fold = [&](const Shape& o, auto f, double init) {
    Shape i = o;
    double acc = init;
    const int64_t begin = o[axis] * kExtent, end = std::min(begin + kExtent, shape[axis]);
    for (i[axis] = begin; i[axis] < end; ++i[axis]) acc = f(acc, x.at(i));
    return acc;
  };
  const IndexFn want = [&](const Shape& o) { return fold(o, Op::combine, Op::init); };
  const IndexFn scale = [&](const Shape& o) {  // sums may cancel: relative to the sum of |x|
    return std::fmax(fold(
                         o, [](double a, double v) { return a + std::fabs(v); }, 0.0),
                     1e-3);
  };
  expect_matches(z, want, default_rtol<T>(), scale);
}

template <class Op, Element T>
void add_rows(std::vector<Case>& rows) {
  const std::string base = std::string(Op::name) + "_" + dtype_tag<T>();
  rows.push_back({base + "_2d_axis0", run_reduce<Op, T, 2, 0>});
  rows.push_back({base + "_2d_axis1", run_reduce<Op, T, 2, 1>});
  rows.push_back({base + "_2d_axis_minus1", run_reduce<Op, T, 2, -1>});
  rows.push_back({base + "_3d_axis0", run_reduce<Op, T, 3, 0>});
  rows.push_back({base + "_3d_axis1", run_reduce<Op, T, 3, 1>});
  rows.push_back({base + "_3d_axis2", run_reduce<Op, T, 3, 2>});
}

template <class Op>
void add_op_rows(std::vector<Case>& rows) {
  add_rows<Op, float>(rows);
  add_rows<Op, half>(rows);
  add_rows<Op, bfloat16>(rows);
  add_rows<Op, int32_t>(rows);
}

std::vector<Case> reduce_rows() {
  std::vector<Case> rows;
  add_op_rows<Sum>(rows);
  add_op_rows<Max>(rows);
  add_op_rows<Min>(rows);
  return rows;
}

TESSERA_OP_CASES(Reduce, reduce_rows());

}  // namespace
}  // namespace tessera::test

// Scans within a tile: cumsum and cumprod, inclusive and exclusive, along each axis of a rank-2
// tile (and along axis -1) of a tensor with ragged edges. Each output element covers the elements
// of its tile's line up to itself (inclusive) or up to the one before (exclusive).
#include <algorithm>
#include <cmath>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

struct CumSum {
  static constexpr const char* name = "cumsum";
  template <Element T>
  static double x(Rng& r) {
    if constexpr (is_float_v<T>)
      return r.uniform(-10, 10);
    else
      return static_cast<double>(r.integer(-100, 100));
  }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis, Scan scan) {
    return cumsum(t, axis, scan);
  }
  static double identity() { return 0; }
};
struct CumProd {
  static constexpr const char* name = "cumprod";
  template <Element T>
  static double x(Rng& r) {
    if constexpr (is_float_v<T>)
      return (r.integer(0, 3) == 0 ? -1 : 1) * r.uniform(0.7, 1.4);
    else
      return static_cast<double>(r.integer(-9, 9));  // wraps in i32 past 9^10
  }
  template <Element T>
  static Tile<T> dsl(const Tile<T>& t, int axis, Scan scan) {
    return cumprod(t, axis, scan);
  }
  static double identity() { return 1; }
};

constexpr int64_t kTile[] = {8, 16};

template <class Op, Element T, int Axis, bool Exclusive>
TESSERA_KERNEL(scan_kernel, Out<T> z, In<T> x) {
  z.store(Op::dsl(load_like(x, z), Axis, Exclusive ? Scan::exclusive : Scan::inclusive));
};

template <class Op, Element T, int Axis, bool Exclusive>
void run_scan(Rng& rng) {
  constexpr int axis = (Axis + 2) % 2;
  const Shape tile{kTile[0], kTile[1]};
  const Shape shape{rng.ragged(kTile[0], 3), rng.ragged(kTile[1], 3)};
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  x.fill([&](const Shape&) { return Op::template x<T>(rng); });
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  (void)scan_kernel<Op, T, Axis, Exclusive>(z.view().partition(tile), x.view()).sync();

  // Folds f over the elements of o's tile line before it (and o itself unless exclusive).
  auto fold = [&](const Shape& o, auto f, double init) {
    Shape i = o;
    double acc = init;
    const int64_t begin = o[axis] / kTile[axis] * kTile[axis], end = o[axis] + (Exclusive ? 0 : 1);
    for (i[axis] = begin; i[axis] < end; ++i[axis]) acc = f(acc, x.at(i));
    return acc;
  };
  const bool sum = std::is_same_v<Op, CumSum>;
  const IndexFn want = [&](const Shape& o) {
    if constexpr (is_float_v<T>) {
      return fold(
          o, [&](double a, double v) { return sum ? a + v : a * v; }, Op::identity());
    } else {  // wrapping, on the 64-bit pattern
      const double r = fold(
          o,
          [&](double a, double v) {
            const uint64_t p = static_cast<uint64_t>(static_cast<int64_t>(a)),
                           q = static_cast<uint64_t>(static_cast<int64_t>(v));
            return static_cast<double>(static_cast<T>(sum ? p + q : p * q));
          },
          Op::identity());
      return r;
    }
  };
  // Sums may cancel: relative to the sum of |x| (products: to the result, after up to 16 roundings
  // of f32 steps on the GPU).
  const IndexFn scale = [&](const Shape& o) {
    if (!sum) return std::fmax(std::fabs(want(o)), 1e-3);
    return std::fmax(fold(
                         o, [](double a, double v) { return a + std::fabs(v); }, 0.0),
                     1e-3);
  };
  expect_matches(z, want, 4 * default_rtol<T>(), scale);
}

template <class Op, Element... Ts>
void add_rows(std::vector<Case>& rows) {
  (
      [&] {
        const std::string base = std::string(Op::name) + "_" + dtype_tag<Ts>();
        rows.push_back({base + "_axis0", run_scan<Op, Ts, 0, false>});
        rows.push_back({base + "_axis1", run_scan<Op, Ts, 1, false>});
        rows.push_back({base + "_axis_minus1_exclusive", run_scan<Op, Ts, -1, true>});
        rows.push_back({base + "_axis0_exclusive", run_scan<Op, Ts, 0, true>});
      }(),
      ...);
}

std::vector<Case> scan_rows() {
  std::vector<Case> rows;
  add_rows<CumSum, float, half, bfloat16, double, int32_t, int64_t>(rows);
  add_rows<CumProd, float, half, bfloat16, double, int32_t>(rows);
  return rows;
}

TESSERA_OP_CASES(Scan, scan_rows());

}  // namespace
}  // namespace tessera::test

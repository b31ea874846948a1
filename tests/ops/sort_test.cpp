// sort, argsort and topk within a tile: each line of a loaded tile (the zero pad of a ragged edge
// included, as the kernel sees it) sorted ascending along the last axis and descending along the
// first, argsort with many ties (stable: equal elements keep their order), NaNs (the largest
// value), and topk's values and indices. The reference is std::stable_sort on doubles.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

constexpr int64_t TM = 4, TN = 16, K = 3;

template <Element T, int Axis, bool Down>
TESSERA_KERNEL(sorted, Out<T> z, In<T> x) {
  z.store(sort(load_like(x, z), Axis, Down ? Order::descending : Order::ascending));
};
template <Element T, int Axis, bool Down>
TESSERA_KERNEL(sorted_indices, Out<int32_t> z, In<T> x) {
  z.store(argsort(load_like(x, z), Axis, Down ? Order::descending : Order::ascending));
};
// Block (i, 0): the top K of each row of x's tile (i, j) for j = tile_index(1), values then
// indices (cast to T) side by side.
template <Element T>
TESSERA_KERNEL(top_k, Out<T> z, In<T> x) {
  const TopK<T> t = topk(load(x, {tile_index(0), tile_index(1)}, {TM, TN}), K, -1);
  z.store(concat({t.values, t.indices.template cast<T>()}, 1));
};

template <Element T>
using G = Guarded<T>;

// The line of the tile through tile element `at` along `axis`, as the kernel loads it (zero past
// the tensor's edge), and the stable order of that line.
template <Element T>
std::vector<double> line_of(const G<T>& x, const Shape& at, int axis, int64_t extent) {
  std::vector<double> v;
  Shape i = at;
  const int64_t first = at[static_cast<size_t>(axis)] / extent * extent;
  for (int64_t j = 0; j < extent; ++j) {
    i[static_cast<size_t>(axis)] = first + j;
    v.push_back(i[0] < x.shape()[0] && i[1] < x.shape()[1] ? x.at(i) : 0.0);
  }
  return v;
}
std::vector<int64_t> stable_order(const std::vector<double>& v, bool down) {
  std::vector<int64_t> o(v.size());
  std::iota(o.begin(), o.end(), 0);
  std::stable_sort(o.begin(), o.end(), [&](int64_t i, int64_t j) {
    const double a = v[static_cast<size_t>(i)], b = v[static_cast<size_t>(j)];
    if (std::isnan(a) || std::isnan(b)) return down ? !std::isnan(b) : !std::isnan(a);
    return down ? a > b : a < b;
  });
  return o;
}

// Inputs with ties (few distinct values) and, for floats, some NaNs.
template <Element T>
void fill_with_ties(G<T>& x, Rng& rng) {
  const bool nans = is_float_v<T>;
  x.fill([&](const Shape&) {
    const int64_t k = rng.integer(0, 9);
    return nans && k == 0 ? NAN : double(k - 4);
  });
}

template <Element T, int Axis, bool Down>
void run_sort(Rng& rng, bool indices) {
  const Shape s{rng.ragged(TM, 3), rng.ragged(TN, 2)};
  const int64_t extent = Axis == 0 ? TM : TN;
  G<T> x(s, G<T>::Fill::Input);
  fill_with_ties(x, rng);
  auto want = [&](const Shape& i) {
    const std::vector<double> line = line_of(x, i, Axis, extent);
    const int64_t pos = i[Axis] % extent;
    const int64_t from = stable_order(line, Down)[static_cast<size_t>(pos)];
    return indices ? double(from) : line[static_cast<size_t>(from)];
  };
  if (indices) {
    G<int32_t> z(s, G<int32_t>::Fill::Output);
    (void)sorted_indices<T, Axis, Down>(z.view().partition({TM, TN}), x.view()).sync();
    expect_matches(z, want, 0);
  } else {
    G<T> z(s, G<T>::Fill::Output);
    (void)sorted<T, Axis, Down>(z.view().partition({TM, TN}), x.view()).sync();
    expect_matches(z, want, 0);
  }
}

template <Element T>
void run_topk(Rng& rng) {
  const Shape s{rng.ragged(TM, 3), rng.ragged(TN, 2)};
  G<T> x(s, G<T>::Fill::Input);
  fill_with_ties(x, rng);
  const int64_t col_tiles = ceil_div(s[1], TN);
  G<T> z({s[0], col_tiles * 2 * K}, G<T>::Fill::Output);
  (void)top_k<T>(z.view().partition({TM, 2 * K}), x.view()).sync();
  expect_matches(
      z,
      [&](const Shape& i) {
        const int64_t tile = i[1] / (2 * K), c = i[1] % (2 * K);
        const std::vector<double> line = line_of(x, {i[0], tile * TN}, 1, TN);
        const int64_t from = stable_order(line, true)[static_cast<size_t>(c % K)];
        return c < K ? line[static_cast<size_t>(from)] : double(from);
      },
      0);
}

template <Element T>
std::vector<Case> rows_for() {
  const std::string t = "_" + dtype_tag<T>();
  std::vector<Case> rows;
  rows.push_back(
      {"sort_ascending_last_axis" + t, [](Rng& rng) { run_sort<T, 1, false>(rng, false); }});
  rows.push_back(
      {"sort_descending_first_axis" + t, [](Rng& rng) { run_sort<T, 0, true>(rng, false); }});
  rows.push_back(
      {"argsort_descending_stable" + t, [](Rng& rng) { run_sort<T, 1, true>(rng, true); }});
  rows.push_back(
      {"argsort_ascending_first_axis" + t, [](Rng& rng) { run_sort<T, 0, false>(rng, true); }});
  rows.push_back({"topk_values_and_indices" + t, [](Rng& rng) { run_topk<T>(rng); }});
  return rows;
}

std::vector<Case> sort_rows() {
  std::vector<Case> rows;
  for (auto&& part :
       {rows_for<float>(), rows_for<half>(), rows_for<bfloat16>(), rows_for<int32_t>()})
    rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}
TESSERA_OP_CASES(Sort, sort_rows());

}  // namespace
}  // namespace tessera::test

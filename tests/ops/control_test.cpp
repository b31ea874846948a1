// The kernel interface and control flow: tile_index/num_tiles on a 3-D grid, dim(), Scalar<T>
// parameters of several dtypes, for_range with values carried across iterations (run-time
// bounds, zero-trip loops, nesting, an if_ inside), if_ with and without an else, and print.
#include <algorithm>
#include <sstream>

#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// Each block stores its linear id (row-major over the grid) into `id` and the grid's extents into
// `counts`: two outputs of one grid.
TESSERA_KERNEL(grid_ids, Out<int32_t> id, Out<int32_t> counts) {
  const Index t0 = tile_index(0), t1 = id.tile_index(1), t2 = tile_index(2);
  const Index n0 = num_tiles(0), n1 = id.num_tiles(1), n2 = num_tiles(2);
  id.store(Tile<int32_t>::zeros(id.shape()) + ((t0 * n1 + t1) * n2 + t2));
  counts.store(Tile<int32_t>::zeros(counts.shape()) + (n0 * 10000 + n1 * 100 + n2));
};

void run_grid_ids(Rng& rng) {
  const Shape tile{2, 3, 4};
  Shape s;
  for (int64_t t : tile) s.push_back(rng.ragged(t, 4));
  Guarded<int32_t> id(s, Guarded<int32_t>::Fill::Output), counts(s, Guarded<int32_t>::Fill::Output);
  (void)grid_ids(id.view().partition(tile), counts.view().partition(tile)).sync();
  Shape g;
  for (size_t d = 0; d < 3; ++d) g.push_back(ceil_div(s[d], tile[d]));
  expect_matches(
      id, [&](const Shape& i) { return double(((i[0] / 2) * g[1] + i[1] / 3) * g[2] + i[2] / 4); },
      0);
  expect_matches(
      counts, [&](const Shape&) { return double(g[0] * 10000 + g[1] * 100 + g[2]); }, 0);
}

TESSERA_KERNEL(dims, Out<int32_t> z, In<float> x) {
  const Tile<int64_t> d = x.dim(0) * 1000 + x.dim(1) + z.dim(0) * 1000000;
  z.store(Tile<int32_t>::zeros(z.shape()) + d.cast<int32_t>());
};

void run_dims(Rng& rng) {
  const Shape xs{rng.integer(1, 999), rng.integer(1, 999)};
  const Shape zs{rng.ragged(8, 4), rng.ragged(16, 2)};
  Guarded<float> x(xs, Guarded<float>::Fill::Input);
  Guarded<int32_t> z(zs, Guarded<int32_t>::Fill::Output);
  (void)dims(z.view().partition({8, 16}), x.view()).sync();
  expect_matches(
      z, [&](const Shape&) { return double(xs[0] * 1000 + xs[1] + zs[0] * 1000000); }, 0);
}

// Scalars of four dtypes, each converted to f32 and combined.
TESSERA_KERNEL(mixed_scalars, Out<float> z, Scalar<float> a, Scalar<int32_t> b, Scalar<half> c,
               Scalar<bfloat16> d) {
  const Tile<float> v = a * b.cast<float>() + c.cast<float>() - d.cast<float>();
  z.store(broadcast(v, z.shape()));
};

void run_mixed_scalars(Rng& rng) {
  const float a = static_cast<float>(rng.uniform(-4, 4));
  const int32_t b = static_cast<int32_t>(rng.integer(-100, 100));
  const half c(static_cast<float>(rng.uniform(-4, 4)));
  const bfloat16 d(static_cast<float>(rng.uniform(-4, 4)));
  Guarded<float> z({rng.ragged(8, 2), rng.ragged(16, 2)}, Guarded<float>::Fill::Output);
  (void)mixed_scalars(z.view().partition({8, 16}), a, b, c, d).sync();
  const double want = double(a) * b + to_double(c) - to_double(d);
  // Three f32 roundings, relative to the largest intermediate.
  expect_matches(
      z, [&](const Shape&) { return want; }, 1e-6,
      [&](const Shape&) { return std::fabs(double(a) * b) + 8; });
}

// Row sums: a [TM, TK] accumulator carried over the K tiles of x, reduced at the end.
template <Element T, int TM, int TK>
TESSERA_KERNEL(row_sums, Out<T> z, In<T> x) {
  const Index i = tile_index(0);
  Tile<T> acc = Tile<T>::zeros({TM, TK});
  const Index k_tiles = ((x.dim(1) + (TK - 1)) / TK).template cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) { acc += load(x, {i, k}, {TM, TK}); });
  z.store(sum(acc, 1));
};

template <Element T>
void run_row_sums(Rng& rng) {
  constexpr int TM = 8, TK = 16;
  const Shape s{rng.ragged(TM, 3), rng.ragged(TK, 6)};
  Guarded<T> x(s, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -10, 10);
  Guarded<T> z({s[0], 1}, Guarded<T>::Fill::Output);
  (void)row_sums<T, TM, TK>(z.view().partition({TM, 1}), x.view()).sync();
  auto fold = [&](int64_t r, bool magnitudes) {
    double acc = 0;
    for (int64_t c = 0; c < s[1]; ++c) acc += magnitudes ? std::fabs(x.at({r, c})) : x.at({r, c});
    return acc;
  };
  // The accumulator is rounded to T once per iteration, and once more by the sum.
  const double rtol = default_rtol<T>() * static_cast<double>(ceil_div(s[1], TK) + 1);
  expect_matches(
      z, [&](const Shape& i) { return fold(i[0], false); }, rtol,
      [&](const Shape& i) { return std::fmax(fold(i[0], true), 1e-3); });
}

// A loop with run-time bounds and step carrying two scalars: the trip count and the sum of the
// induction variable. begin >= end runs no iteration and keeps the initial values.
TESSERA_KERNEL(counted_loop, Out<int32_t> z, Scalar<int32_t> begin, Scalar<int32_t> end,
               Scalar<int32_t> step) {
  Index count = Index::zeros({});
  Index total = Index::full({}, 0);
  for_range(begin, end, step, [&](Index iv) {
    count = count + 1;
    total = total + iv;
  });
  z.store(Tile<int32_t>::zeros(z.shape()) + (count * 100000 + total));
};

void run_counted_loop(Rng& rng) {
  const int32_t begin = static_cast<int32_t>(rng.integer(-20, 20));
  const int32_t end = static_cast<int32_t>(rng.integer(-20, 40));
  const int32_t step = static_cast<int32_t>(rng.integer(1, 5));
  int64_t count = 0, total = 0;
  for (int32_t iv = begin; iv < end; iv += step) ++count, total += iv;
  Guarded<int32_t> z({rng.ragged(4, 3)}, Guarded<int32_t>::Fill::Output);
  (void)counted_loop(z.view().partition({4}), begin, end, step).sync();
  expect_matches(
      z, [&](const Shape&) { return double(count * 100000 + total); }, 0);
}

// Nested loops: `acc` is carried through both, `row` (declared in the outer body) through the
// inner one.
TESSERA_KERNEL(nested_loops, Out<int32_t> z, In<int32_t> x, Scalar<int32_t> n, Scalar<int32_t> m) {
  Tile<int32_t> acc = load_like(x, z);
  for_range(0, n, [&](Index a) {
    Tile<int32_t> row = Tile<int32_t>::zeros(z.shape());
    for_range(0, m, [&](Index b) {
      row = row + (a * m + b);
      acc = acc + 1;
    });
    acc = acc + row;
  });
  z.store(acc);
};

void run_nested_loops(Rng& rng) {
  const int32_t n = static_cast<int32_t>(rng.integer(0, 6)),
                m = static_cast<int32_t>(rng.integer(0, 6));
  const Shape s{rng.ragged(8, 2), rng.ragged(16, 2)};
  Guarded<int32_t> x(s, Guarded<int32_t>::Fill::Input), z(s, Guarded<int32_t>::Fill::Output);
  x.fill_uniform(rng, -1000, 1000);
  (void)nested_loops(z.view().partition({8, 16}), x.view(), n, m).sync();
  const int64_t nm = int64_t{n} * m;
  expect_matches(
      z, [&](const Shape& i) { return x.at(i) + double(nm + nm * (nm - 1) / 2); }, 0);
}

// Blocks in tile rows below `threshold` double their tile, the others subtract one.
template <Element T>
TESSERA_KERNEL(if_else, Out<T> z, In<T> x, Scalar<int32_t> threshold) {
  const Tile<T> v = load_like(x, z);
  Tile<T> r = v;
  if_(
      tile_index(0) < threshold, [&] { r = v * T(2); }, [&] { r = v - T(1); });
  z.store(r);
};
// Blocks in even tile columns add three; there is no else.
template <Element T>
TESSERA_KERNEL(if_then, Out<T> z, In<T> x) {
  Tile<T> r = load_like(x, z);
  const Index j = tile_index(1);
  if_((j / 2) * 2 == j, [&] { r = r + T(3); });
  z.store(r);
};

template <Element T>
void run_if(bool with_else, Rng& rng) {
  const Shape s{rng.ragged(8, 4), rng.ragged(16, 4)};
  Guarded<T> x(s, Guarded<T>::Fill::Input), z(s, Guarded<T>::Fill::Output);
  x.fill_uniform(rng, -50, 50);
  const int32_t threshold = static_cast<int32_t>(rng.integer(0, 4));
  if (with_else) {
    (void)if_else<T>(z.view().partition({8, 16}), x.view(), threshold).sync();
    expect_matches(
        z, [&](const Shape& i) { return i[0] / 8 < threshold ? x.at(i) * 2 : x.at(i) - 1; },
        default_rtol<T>());
  } else {
    (void)if_then<T>(z.view().partition({8, 16}), x.view()).sync();
    expect_matches(
        z, [&](const Shape& i) { return (i[1] / 16) % 2 == 0 ? x.at(i) + 3 : x.at(i); },
        default_rtol<T>());
  }
}

// An if_ inside a loop: only even iterations add to the carried accumulator.
TESSERA_KERNEL(even_steps, Out<int32_t> z, In<int32_t> x, Scalar<int32_t> n) {
  Tile<int32_t> acc = load_like(x, z);
  for_range(0, n, [&](Index k) { if_((k / 2) * 2 == k, [&] { acc = acc + k; }); });
  z.store(acc);
};

void run_even_steps(Rng& rng) {
  const int32_t n = static_cast<int32_t>(rng.integer(0, 20));
  const Shape s{rng.ragged(8, 2), rng.ragged(16, 2)};
  Guarded<int32_t> x(s, Guarded<int32_t>::Fill::Input), z(s, Guarded<int32_t>::Fill::Output);
  x.fill_uniform(rng, -1000, 1000);
  (void)even_steps(z.view().partition({8, 16}), x.view(), n).sync();
  int64_t evens = 0;
  for (int32_t k = 0; k < n; k += 2) evens += k;
  expect_matches(
      z, [&](const Shape& i) { return x.at(i) + double(evens); }, 0);
}

// Every block prints one line, with an i32, a bool and an f32 in it.
TESSERA_KERNEL(announce, Out<int32_t> z) {
  const Index i = tile_index(0);
  print("block {} of {}: first {}, half {}", i, num_tiles(0), i == 0, Tile<float>::full({}, 0.5f));
  z.store(Tile<int32_t>::zeros(z.shape()) + i);
};

void run_print(Rng& rng) {
  const int64_t n = rng.ragged(4, 5);
  Guarded<int32_t> z({n}, Guarded<int32_t>::Fill::Output);
  ::testing::internal::CaptureStdout();
  (void)announce(z.view().partition({4})).sync();
  std::istringstream printed(::testing::internal::GetCapturedStdout());
  std::vector<std::string> lines, want;
  for (std::string line; std::getline(printed, line);) lines.push_back(line);
  const int64_t blocks = ceil_div(n, 4);
  for (int64_t b = 0; b < blocks; ++b)
    want.push_back("block " + std::to_string(b) + " of " + std::to_string(blocks) + ": first " +
                   (b == 0 ? "true" : "false") + ", half 0.5");
  std::sort(lines.begin(), lines.end());  // blocks print in any order, each line whole
  std::sort(want.begin(), want.end());
  EXPECT_EQ(lines, want);
  expect_matches(
      z, [](const Shape& i) { return double(i[0] / 4); }, 0);
}

std::vector<Case> control_rows() {
  return {
      {"tile_index_num_tiles_3d_two_outputs", run_grid_ids},
      {"dim_of_in_and_out", run_dims},
      {"scalar_params_f32_i32_f16_bf16", run_mixed_scalars},
      {"for_range_carried_accumulator_f32", run_row_sums<float>},
      {"for_range_carried_accumulator_f16", run_row_sums<half>},
      {"for_range_carried_accumulator_bf16", run_row_sums<bfloat16>},
      {"for_range_carried_accumulator_i32", run_row_sums<int32_t>},
      {"for_range_runtime_bounds_and_step", run_counted_loop},
      {"for_range_nested_carries", run_nested_loops},
      {"for_range_with_if_inside", run_even_steps},
      {"if_else_f32", [](Rng& r) { run_if<float>(true, r); }},
      {"if_else_f16", [](Rng& r) { run_if<half>(true, r); }},
      {"if_else_bf16", [](Rng& r) { run_if<bfloat16>(true, r); }},
      {"if_else_i32", [](Rng& r) { run_if<int32_t>(true, r); }},
      {"if_without_else_f32", [](Rng& r) { run_if<float>(false, r); }},
      {"if_without_else_i32", [](Rng& r) { run_if<int32_t>(false, r); }},
      {"print_one_line_per_block", run_print},
  };
}

TESSERA_OP_CASES(Control, control_rows());

}  // namespace
}  // namespace tessera::test

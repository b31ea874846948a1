// gather (rows of an In chosen by an index tile) and load_t (a tile with its last two axes
// swapped, straight from memory): rows of an embedding table by random ids, pages of a paged
// cache (3-D, pages chosen by a page table), columns starting at a run-time offset past the edge
// with a custom pad, the transpose of a ragged 2-D tensor through load_t, and single elements as
// scalars (load_element), inside and outside the tensor.
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element T>
constexpr double kPad = is_float_v<T> ? -3.5 : -7;

// z [N, D]: row i is row ids[i] of the table x [V, D].
template <Element T>
TESSERA_KERNEL(embed, Out<T> z, In<T> x, In<int32_t> ids) {
  const Shape& s = z.shape();
  const Tile<int32_t> rows = load(ids, {tile_index(0)}, {s[0]});
  z.store(gather(x, rows, {tile_index(1) * static_cast<int32_t>(s[1])}, s));
};

// z [N, S, D]: page i is page table[i] of the cache x [P, S, D].
template <Element T>
TESSERA_KERNEL(pages, Out<T> z, In<T> x, In<int32_t> table) {
  const Shape& s = z.shape();
  const Tile<int32_t> rows = load(table, {tile_index(0)}, {s[0]});
  z.store(gather(
      x, rows,
      {tile_index(1) * static_cast<int32_t>(s[1]), tile_index(2) * static_cast<int32_t>(s[2])}, s));
};

// Like embed, the columns shifted by dc, a custom pad past the edge.
template <Element T>
TESSERA_KERNEL(embed_shifted, Out<T> z, In<T> x, In<int32_t> ids, Scalar<int32_t> dc) {
  const Shape& s = z.shape();
  const Tile<int32_t> rows = load(ids, {tile_index(0)}, {s[0]});
  z.store(gather(x, rows, {tile_index(1) * static_cast<int32_t>(s[1]) + dc}, s,
                 Pad::value_of(kPad<T>)));
};

// z = x^T, each block reading its tile of x transposed.
template <Element T>
TESSERA_KERNEL(transposed, Out<T> z, In<T> x) {
  z.store(load_t(x, {tile_index(0), tile_index(1)}, z.shape()));
};

// Every element of z: x[r, c] (the pad outside x) plus its own index.
template <Element T>
TESSERA_KERNEL(one_element, Out<T> z, In<T> x, Scalar<int32_t> r, Scalar<int32_t> c) {
  z.store(iota<T>(z.shape()) + load_element(x, {r, c}, Pad::value_of(kPad<T>)));
};

template <Element T>
using G = Guarded<T>;
template <Element T>
constexpr auto kIn = G<T>::Fill::Input;
template <Element T>
constexpr auto kOut = G<T>::Fill::Output;

// n random ids in [0, v).
G<int32_t>& random_ids(G<int32_t>& ids, Rng& rng, int64_t v) {
  ids.fill_uniform(rng, 0, static_cast<double>(v - 1));
  return ids;
}

template <Element T>
std::vector<Case> rows_for() {
  const std::string t = "_" + dtype_tag<T>();
  std::vector<Case> rows;
  rows.push_back({"gather_embedding_rows" + t, [](Rng& rng) {
                    const int64_t v = rng.integer(1, 40), d = rng.ragged(16, 3);
                    const int64_t n = rng.ragged(4, 5);
                    G<T> x({v, d}, kIn<T>), z({n, d}, kOut<T>);
                    G<int32_t> ids({n}, kIn<int32_t>);
                    x.fill_uniform(rng, -50, 50);
                    random_ids(ids, rng, v);
                    (void)embed<T>(z.view().partition({4, 16}), x.view(), ids.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          return x.at({static_cast<int64_t>(ids.at({i[0]})), i[1]});
                        },
                        0);
                  }});
  rows.push_back({"gather_pages_3d" + t, [](Rng& rng) {
                    const int64_t p = rng.integer(1, 9), s = rng.ragged(4, 2), d = rng.ragged(8, 2),
                                  n = rng.ragged(2, 4);
                    G<T> x({p, s, d}, kIn<T>), z({n, s, d}, kOut<T>);
                    G<int32_t> table({n}, kIn<int32_t>);
                    x.fill_uniform(rng, -50, 50);
                    random_ids(table, rng, p);
                    (void)pages<T>(z.view().partition({2, 4, 8}), x.view(), table.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          return x.at({static_cast<int64_t>(table.at({i[0]})), i[1], i[2]});
                        },
                        0);
                  }});
  rows.push_back(
      {"gather_shifted_columns_custom_pad" + t, [](Rng& rng) {
         const int64_t v = rng.integer(1, 30), d = rng.ragged(16, 2);
         const int64_t n = rng.ragged(4, 3);
         const auto dc = static_cast<int32_t>(rng.integer(-20, 20));
         G<T> x({v, d}, kIn<T>), z({n, d}, kOut<T>);
         G<int32_t> ids({n}, kIn<int32_t>);
         x.fill_uniform(rng, -50, 50);
         random_ids(ids, rng, v);
         (void)embed_shifted<T>(z.view().partition({4, 16}), x.view(), ids.view(), dc).sync();
         expect_matches(
             z,
             [&](const Shape& i) {
               const int64_t c = i[1] + dc;
               return c >= 0 && c < d ? x.at({static_cast<int64_t>(ids.at({i[0]})), c}) : kPad<T>;
             },
             0);
       }});
  rows.push_back({"load_t_transposes_ragged_tiles" + t, [](Rng& rng) {
                    const Shape s{rng.ragged(16, 3), rng.ragged(8, 3)};
                    G<T> x(s, kIn<T>), z({s[1], s[0]}, kOut<T>);
                    x.fill_uniform(rng, -50, 50);
                    (void)transposed<T>(z.view().partition({8, 16}), x.view()).sync();
                    expect_matches(
                        z,
                        [&](const Shape& i) {
                          return x.at({i[1], i[0]});
                        },
                        0);
                  }});
  rows.push_back(
      {"load_element_as_scalar" + t, [](Rng& rng) {
         const Shape s{rng.integer(1, 9), rng.integer(1, 9)};
         G<T> x(s, kIn<T>), z({rng.ragged(8, 2)}, kOut<T>);
         x.fill_uniform(rng, -50, 50);
         const auto r = static_cast<int32_t>(rng.integer(-2, s[0] + 1));
         const auto c = static_cast<int32_t>(rng.integer(-2, s[1] + 1));
         (void)one_element<T>(z.view().partition({8}), x.view(), r, c).sync();
         const double v = r >= 0 && c >= 0 && r < s[0] && c < s[1] ? x.at({r, c}) : kPad<T>;
         expect_matches(
             z, [&](const Shape& i) { return cast_reference<T>(v + double(i[0] % 8)); },
             default_rtol<T>());
       }});
  return rows;
}

std::vector<Case> gather_rows() {
  std::vector<Case> rows;
  for (auto&& part :
       {rows_for<float>(), rows_for<half>(), rows_for<bfloat16>(), rows_for<int32_t>()})
    rows.insert(rows.end(), part.begin(), part.end());
  return rows;
}
TESSERA_OP_CASES(Gather, gather_rows());

}  // namespace
}  // namespace tessera::test

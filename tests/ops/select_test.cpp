// select(cond, a, b) / where: a where cond holds, else b, with the three broadcast to one shape:
// tile branches, a constant branch, a Scalar<T> branch, a row condition [1, TN] against [TM, TN]
// branches, a [TM, TN] condition against a row and a constant, and bool branches.
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

constexpr int kOtherwise = -2;

template <Element T>
TESSERA_KERNEL(where_tiles, Out<T> z, In<T> x, In<T> y) {
  const Tile<T> a = load_like(x, z), b = load_like(y, z);
  z.store(where(a > b, a, b));
};
template <Element T>
TESSERA_KERNEL(select_constant, Out<T> z, In<T> x) {
  const Tile<T> a = load_like(x, z);
  z.store(select(a > T(0), a, T(kOtherwise)));
};
template <Element T>
TESSERA_KERNEL(select_scalar, Out<T> z, In<T> x, Scalar<T> s) {
  const Tile<T> a = load_like(x, z);
  z.store(select(a < s, s, a));
};
template <Element T>
TESSERA_KERNEL(select_row_condition, Out<T> z, In<T> x, In<T> y, In<T> row) {
  const Tile<bool> c = load(row, {0, tile_index(1)}, {1, z.shape()[1]}) > T(0);
  z.store(select(c, load_like(x, z), load_like(y, z)));
};

// Between two bool tiles (the larger of x and y, chosen through a bool select).
template <Element T>
TESSERA_KERNEL(select_bool_branches, Out<T> z, In<T> x, In<T> y) {
  const Tile<T> a = load_like(x, z), b = load_like(y, z);
  const Tile<bool> pick_a = select(a > T(0), a > b, b < a);  // both say a > b
  z.store(select(pick_a, a, b));
};
// A condition wider than both branches: a [TM, TN] condition picks between a [1, TN] row and a
// constant, so the result is [TM, TN].
template <Element T>
TESSERA_KERNEL(select_wide_condition, Out<T> z, In<T> x, In<T> row) {
  const Tile<bool> c = load_like(x, z) > T(0);
  z.store(select(c, load(row, {0, tile_index(1)}, {1, z.shape()[1]}), T(kOtherwise)));
};

enum class Form {
  WhereTiles,
  SelectConstant,
  SelectScalar,
  SelectRowCondition,
  SelectBoolBranches,
  SelectWideCondition
};

template <Element T>
void run_select(Form form, Rng& rng) {
  const Shape tile{8, 16};
  const Shape shape{rng.ragged(8, 4), rng.ragged(16, 3)};
  using Fill = typename Guarded<T>::Fill;
  Guarded<T> x(shape, Fill::Input), y(shape, Fill::Input), row({1, shape[1]}, Fill::Input);
  for (Guarded<T>* g : {&x, &y, &row}) g->fill_uniform(rng, -20, 20);
  const T s = from_double<T>(rng.uniform(-10, 10));
  Guarded<T> z(shape, Fill::Output);
  IndexFn want;
  switch (form) {
    case Form::WhereTiles:
      (void)where_tiles<T>(z.view().partition(tile), x.view(), y.view()).sync();
      want = [&](const Shape& i) { return x.at(i) > y.at(i) ? x.at(i) : y.at(i); };
      break;
    case Form::SelectConstant:
      (void)select_constant<T>(z.view().partition(tile), x.view()).sync();
      want = [&](const Shape& i) { return x.at(i) > 0 ? x.at(i) : kOtherwise; };
      break;
    case Form::SelectScalar:
      (void)select_scalar<T>(z.view().partition(tile), x.view(), s).sync();
      want = [&](const Shape& i) { return x.at(i) < to_double(s) ? to_double(s) : x.at(i); };
      break;
    case Form::SelectRowCondition:
      (void)select_row_condition<T>(z.view().partition(tile), x.view(), y.view(), row.view())
          .sync();
      want = [&](const Shape& i) { return row.at({0, i[1]}) > 0 ? x.at(i) : y.at(i); };
      break;
    case Form::SelectBoolBranches:
      (void)select_bool_branches<T>(z.view().partition(tile), x.view(), y.view()).sync();
      want = [&](const Shape& i) { return x.at(i) > y.at(i) ? x.at(i) : y.at(i); };
      break;
    case Form::SelectWideCondition:
      (void)select_wide_condition<T>(z.view().partition(tile), x.view(), row.view()).sync();
      want = [&](const Shape& i) { return x.at(i) > 0 ? row.at({0, i[1]}) : kOtherwise; };
      break;
  }
  expect_matches(z, want, 0);  // select moves values; it never rounds
}

template <Element... Ts>
void add_rows(std::vector<Case>& rows) {
  const std::pair<Form, const char*> forms[] = {{Form::WhereTiles, "where_tiles"},
                                                {Form::SelectConstant, "select_constant"},
                                                {Form::SelectScalar, "select_scalar"},
                                                {Form::SelectRowCondition, "select_row_condition"},
                                                {Form::SelectBoolBranches, "select_bool_branches"},
                                                {Form::SelectWideCondition, "select_wide_condition"}};
  (
      [&] {
        for (auto [form, name] : forms)
          rows.push_back({std::string(name) + "_" + dtype_tag<Ts>(),
                          [form](Rng& rng) { run_select<Ts>(form, rng); }});
      }(),
      ...);
}

std::vector<Case> select_rows() {
  std::vector<Case> rows;
  add_rows<float, half, bfloat16, int32_t>(rows);
  return rows;
}

TESSERA_OP_CASES(Select, select_rows());

}  // namespace
}  // namespace tessera::test

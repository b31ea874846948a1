// Loads and stores. load_like and load read the pad value (zero by default, or a custom one)
// wherever the tile leaves the input, including tiles at negative coordinates; the input's guard
// band holds NaN, so reading past its edge instead of padding would show. Stores are masked at
// ragged edges: every output is poisoned first, and the check after the launch expects the poison
// gone inside the tensor and intact everywhere around it (rank 1 to 3, a tile larger than the
// whole tensor, exact multiples, element sizes 1 to 8 bytes).
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element T>
constexpr double kCustomPad = is_float_v<T> ? 2.5 : -7;

template <Element T>
TESSERA_KERNEL(copy, Out<T> z, In<T> x) {
  z.store(load_like(x, z));
};
template <Element T>
TESSERA_KERNEL(copy_custom_pad, Out<T> z, In<T> x) {
  z.store(load_like(x, z, Pad::value_of(kCustomPad<T>)));
};
template <Element T>
TESSERA_KERNEL(copy_unpadded, Out<T> z, In<T> x) {
  z.store(load_like(x, z, Pad::none()));
};
// Block (i, j) stores the input's tile (i + 1, j - 1): past the bottom edge and, for j = 0, at a
// negative tile coordinate.
template <Element T>
TESSERA_KERNEL(copy_shifted, Out<T> z, In<T> x) {
  z.store(load(x, {tile_index(0) + 1, tile_index(1) - 1}, z.shape()));
};

enum class Load { ZeroPad, CustomPad, Shifted };

// z [M, N] from an input x that is smaller along both axes.
template <Element T>
void run_load(Load kind, Rng& rng) {
  const Shape tile{8, 16};
  const Shape shape{rng.ragged(8, 3), rng.ragged(16, 3)};
  const Shape small{shape[0] - rng.integer(1, 7), shape[1] - rng.integer(1, 15)};
  Guarded<T> x(small, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -100, 100);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  auto x_or = [&](int64_t r, int64_t c, double pad) {
    return r >= 0 && c >= 0 && r < small[0] && c < small[1] ? x.at({r, c}) : pad;
  };
  IndexFn want;
  switch (kind) {
    case Load::ZeroPad:
      (void)copy<T>(z.view().partition(tile), x.view()).sync();
      want = [&](const Shape& i) { return x_or(i[0], i[1], 0); };
      break;
    case Load::CustomPad:
      (void)copy_custom_pad<T>(z.view().partition(tile), x.view()).sync();
      want = [&](const Shape& i) { return x_or(i[0], i[1], kCustomPad<T>); };
      break;
    case Load::Shifted:
      (void)copy_shifted<T>(z.view().partition(tile), x.view()).sync();
      want = [&](const Shape& i) { return x_or(i[0] + tile[0], i[1] - tile[1], 0); };
      break;
  }
  expect_matches(z, want, 0);
}

// A copy through a partition of `tile`, of a tensor whose extents come from `extent(tile)`.
using Extent = int64_t (*)(Rng&, int64_t tile);
int64_t ragged_extent(Rng& rng, int64_t tile) {
  return rng.ragged(tile, 3);
}
int64_t extent_below_tile(Rng& rng, int64_t tile) {
  return rng.integer(1, tile - 1);
}
int64_t whole_tiles(Rng& rng, int64_t tile) {
  return tile * rng.integer(1, 4);
}

template <Element T>
void run_store(Rng& rng, const Shape& tile, Extent extent, bool unpadded) {
  Shape shape;
  for (int64_t t : tile) shape.push_back(extent(rng, t));
  Guarded<T> x(shape, Guarded<T>::Fill::Input);
  const double range = std::is_same_v<T, int8_t> ? 100 : 1000;
  x.fill_uniform(rng, -range, range);
  Guarded<T> z(shape, Guarded<T>::Fill::Output);
  if (unpadded)
    (void)copy_unpadded<T>(z.view().partition(tile), x.view()).sync();
  else
    (void)copy<T>(z.view().partition(tile), x.view()).sync();
  expect_matches(
      z, [&](const Shape& i) { return x.at(i); }, 0);
}

template <Element T>
Case store_case(std::string name, Shape tile) {
  return {name + "_" + dtype_tag<T>(),
          [tile](Rng& rng) { run_store<T>(rng, tile, ragged_extent, false); }};
}

template <Element... Ts>
void add_load_rows(std::vector<Case>& rows) {
  const std::pair<Load, const char*> kinds[] = {{Load::ZeroPad, "load_like_zero_pad"},
                                                {Load::CustomPad, "load_like_custom_pad"},
                                                {Load::Shifted, "load_shifted_tile_zero_pad"}};
  (
      [&] {
        for (auto [kind, name] : kinds)
          rows.push_back({std::string(name) + "_" + dtype_tag<Ts>(),
                          [kind](Rng& rng) { run_load<Ts>(kind, rng); }});
      }(),
      ...);
}

std::vector<Case> memory_rows() {
  std::vector<Case> rows;
  add_load_rows<float, half, bfloat16, int32_t>(rows);
  for (Case c : {store_case<float>("store_masks_ragged_2d", {8, 16}),
                 store_case<half>("store_masks_ragged_2d", {8, 16}),
                 store_case<bfloat16>("store_masks_ragged_2d", {8, 16}),
                 store_case<int32_t>("store_masks_ragged_2d", {8, 16}),
                 store_case<int8_t>("store_masks_ragged_2d", {8, 16}),
                 store_case<double>("store_masks_ragged_2d", {8, 16}),
                 store_case<float>("store_masks_ragged_1d", {32}),
                 store_case<float>("store_masks_ragged_3d", {2, 4, 8}),
                 store_case<half>("store_masks_ragged_3d", {2, 4, 8})})
    rows.push_back(c);
  rows.push_back({"store_masks_tile_larger_than_tensor_f32", [](Rng& rng) {
                    run_store<float>(rng, {16, 16}, extent_below_tile, false);
                  }});
  rows.push_back({"store_whole_tiles_unpadded_load_f32", [](Rng& rng) {
                    run_store<float>(rng, {4, 8}, whole_tiles, true);
                  }});
  return rows;
}

TESSERA_OP_CASES(Memory, memory_rows());

}  // namespace
}  // namespace tessera::test

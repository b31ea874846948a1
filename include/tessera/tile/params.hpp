// Kernel parameters. Out<T>: this tile block's own, exclusive tile of a partitioned output — the
// only thing a safe kernel can write. In<T>: a read-only tensor. Scalar<T>: a run-time value.
// The launcher makes them; kernels receive them by value.
#pragma once

#include <cmath>
#include <initializer_list>
#include <span>
#include <variant>

#include "tessera/tile/tile.hpp"

namespace tessera::tile {

namespace detail {
struct ParamTag {
  int index;
};
template <class...>
inline constexpr bool always_false = false;
}  // namespace detail

// The block's coordinate in the launch grid along `axis`, and the grid's extent.
inline Index tile_index(int axis, std::source_location l = std::source_location::current()) {
  ir::Attrs a;
  a.axis = axis;
  return Index(detail::emit(ir::OpKind::TileIndex, {}, a, l));
}
inline Index num_tiles(int axis, std::source_location l = std::source_location::current()) {
  ir::Attrs a;
  a.axis = axis;
  return Index(detail::emit(ir::OpKind::NumTiles, {}, a, l));
}

// R: the tensor's rank when the kernel fixes it (checked when the launch is compiled, or at
// launch for tensors whose rank is not static), or kDynamicRank.
template <Element T, int R = kDynamicRank>
class Out {
 public:
  using element_type = T;
  static constexpr int static_rank = R;
  explicit Out(detail::ParamTag t) : index_(t.index) {}

  // Writes `tile` to this block's tile; elements past the tensor's edge are dropped.
  void store(const Tile<T>& tile, std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.param = index_;
    detail::emit(ir::OpKind::Store, {tile.value(l)}, a, l);
  }
  // The shape of this block's tile (fixed by the partition) and the tensor's rank.
  const Shape& shape() const { return detail::param(index_).tile_shape; }
  int rank() const { return detail::param(index_).rank; }
  Index tile_index(int axis, std::source_location l = std::source_location::current()) const {
    return tessera::tile::tile_index(axis, l);
  }
  Index num_tiles(int axis, std::source_location l = std::source_location::current()) const {
    return tessera::tile::num_tiles(axis, l);
  }
  // The tensor's run-time extent along `axis`.
  Tile<int64_t> dim(int axis, std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.param = index_;
    a.axis = axis;
    return Tile<int64_t>(detail::emit(ir::OpKind::Dim, {}, a, l));
  }
  int index() const { return index_; }

 private:
  int index_;
};

template <Element T, int R = kDynamicRank>
class In {
 public:
  using element_type = T;
  static constexpr int static_rank = R;
  explicit In(detail::ParamTag t) : index_(t.index) {}

  int rank() const { return detail::param(index_).rank; }
  Tile<int64_t> dim(int axis, std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.param = index_;
    a.axis = axis;
    return Tile<int64_t>(detail::emit(ir::OpKind::Dim, {}, a, l));
  }
  int index() const { return index_; }

  // Inputs are read-only: this overload exists only to say so.
  template <class... Args>
  void store(Args&&...) const {
    static_assert(detail::always_false<Args...>,
                  "store() on an In<T> parameter: kernel inputs are read-only. Declare the "
                  "parameter Out<T> and pass a partition (std::move(t).partition(tile)) to write it.");
  }

 private:
  int index_;
};

// A run-time scalar argument: a rank-0 tile.
template <Element T>
class Scalar : public Tile<T> {
 public:
  explicit Scalar(detail::ParamTag t) : Tile<T>(make(t.index)) {}

 private:
  static ir::ValueId make(int index) {
    ir::Attrs a;
    a.param = index;
    return detail::emit(ir::OpKind::ScalarParam, {}, a, {});
  }
};

// A tile coordinate: a constant or a traced Index.
struct IndexArg {
  IndexArg(int v, std::source_location l = std::source_location::current())  // NOLINT
      : value(v), loc(l) {}
  IndexArg(const Index& v, std::source_location l = std::source_location::current())  // NOLINT
      : value(&v), loc(l) {}
  // A tile of another element type -- most often x.dim(axis), an i64 extent -- is not an index:
  // this overload exists only to say what to write instead of the list of candidates.
  template <Element T>
    requires(!std::is_same_v<T, int32_t>)
  IndexArg(const Tile<T>&, std::source_location l = std::source_location::current())  // NOLINT
      : loc(l) {
    static_assert(detail::always_false<T>,
                  "a for_range bound or step, or a load coordinate, must be an Index "
                  "(Tile<int32_t>) or an int, not a tile of another element type; x.dim(axis) "
                  "is an i64 extent: turn it into an i32 count first, e.g. "
                  "cast<int32_t>((x.dim(1) + (BK - 1)) / BK)");
  }
  ir::ValueId get() const {
    if (auto* i = std::get_if<int>(&value)) return detail::emit_constant(DType::I32, *i, loc);
    return std::get<const Index*>(value)->value(loc);
  }
  std::variant<int, const Index*> value;
  SourceLoc loc;
};

// What a load reads outside the tensor: a padding value (zero by default), or nothing, in which
// case reaching outside is a BoundsError at run time.
struct Pad {
  bool padded = true;
  double value = 0;
  static Pad zero() { return {true, 0}; }
  static Pad value_of(double v) { return {true, v}; }
  static Pad neg_inf() { return {true, -INFINITY}; }
  static Pad none() { return {false, 0}; }
};

namespace detail {
ir::ValueId emit_load(int param, std::span<const ir::ValueId> index, const Shape& shape, Pad pad,
                      SourceLoc loc);
}  // namespace detail

// The tile of `shape` at tile coordinate `index` of x: elements [index[d] * shape[d], ...).
template <Element T, int R>
Tile<T> load(const In<T, R>& x, std::initializer_list<IndexArg> index, Shape shape, Pad pad = {},
             std::source_location l = std::source_location::current()) {
  std::vector<ir::ValueId> idx;
  for (const IndexArg& i : index) idx.push_back(i.get());
  return Tile<T>(detail::emit_load(x.index(), idx, shape, pad, l));
}

// The tile of x that lies where z's tile lies: same tile coordinate, same tile shape.
template <Element T, int R, Element U, int RU>
Tile<T> load_like(const In<T, R>& x, const Out<U, RU>& z, Pad pad = {},
                  std::source_location l = std::source_location::current()) {
  if (x.rank() != z.rank())
    fail_at<KernelError>(l, "load_like: the input has rank ", x.rank(),
                         " but the output tile it follows has rank ", z.rank());
  std::vector<ir::ValueId> idx;
  for (int d = 0; d < z.rank(); ++d) idx.push_back(tile_index(d, l).value(l));
  return Tile<T>(detail::emit_load(x.index(), idx, z.shape(), pad, l));
}

}  // namespace tessera::tile

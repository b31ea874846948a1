// Kernel parameters. Out<T>: this tile block's own, exclusive tile of a partitioned output — the
// only thing a safe kernel can write. In<T>: a read-only tensor. Scalar<T>: a run-time value.
// The launcher makes them; kernels receive them by value.
#pragma once

#include <cmath>
#include <initializer_list>
#include <span>
#include <utility>
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

namespace detail {
// What every tensor parameter kind (Out, Accum, In) has: its element type and static rank, its
// position among the kernel's parameters, the tensor's rank and run-time extents.
template <Element T, int R>
class TensorParam {
 public:
  using element_type = T;
  static constexpr int static_rank = R;
  explicit TensorParam(ParamTag t) : index_(t.index) {}

  int rank() const { return param(index_).rank; }
  // The tensor's run-time extent along `axis`.
  Tile<int64_t> dim(int axis, std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.param = index_;
    a.axis = axis;
    return Tile<int64_t>(emit(ir::OpKind::Dim, {}, a, l));
  }
  int index() const { return index_; }

 protected:
  int index_;
};
}  // namespace detail

// R: the tensor's rank when the kernel fixes it (checked when the launch is compiled, or at
// launch for tensors whose rank is not static), or kDynamicRank.
template <Element T, int R = kDynamicRank>
class Out : public detail::TensorParam<T, R> {
  using Base = detail::TensorParam<T, R>;
  using Base::index_;

 public:
  using Base::Base;

  // Writes `tile` to this block's tile; elements past the tensor's edge are dropped.
  void store(const Tile<T>& tile, std::source_location l = std::source_location::current()) const {
    ir::Attrs a;
    a.param = index_;
    detail::emit(ir::OpKind::Store, {tile.value(l)}, a, l);
  }
  // Writes `piece` into this block's tile with its first element at `offset` within the tile (one
  // int or Index per axis): a tile stored in parts, such as column chunks in a loop. Elements
  // that fall outside the block's tile (or the tensor) are dropped: a block writes only its own
  // tile. Elements no piece covers keep what they held.
  void store_part(const Tile<T>& piece, std::initializer_list<IndexArg> offset,
                  std::source_location l = std::source_location::current()) const {
    std::vector<ir::ValueId> operands{piece.value(l)};
    for (const IndexArg& i : offset) operands.push_back(i.get());
    ir::Attrs a;
    a.param = index_;
    detail::emit(ir::OpKind::StorePart, std::move(operands), a, l);
  }
  // The shape of this block's tile (fixed by the partition).
  const Shape& shape() const { return detail::param(index_).tile_shape; }
  Index tile_index(int axis, std::source_location l = std::source_location::current()) const {
    return tessera::tile::tile_index(axis, l);
  }
  Index num_tiles(int axis, std::source_location l = std::source_location::current()) const {
    return tessera::tile::num_tiles(axis, l);
  }
};

// A tensor that every block may add into, anywhere: tiles of different blocks may overlap,
// since the only write is an add, and adds commute (a split-K GEMM's C, a histogram). The launch
// holds it exclusively, like an Out's partition; the host passes std::move(t).accumulate(grid)
// (runtime/tensor.hpp), whose grid is the launch's when no Out partition defines one. The sums
// land on what the tensor held before the launch (start from zeros() for a plain sum). On the
// GPU each element's add is atomic, in no fixed order (f32 sums may differ from run to run by
// rounding); the CPU backend runs the blocks of such a launch one after another in row-major grid
// order, each block's adds in program order and each tile's elements row-major, so its result is
// deterministic. Dtypes: f32, f64, i32, i64 (integers wrap, as the GPU's atomics do).
template <Element T, int R = kDynamicRank>
class Accum : public detail::TensorParam<T, R> {
  using Base = detail::TensorParam<T, R>;
  using Base::index_;

 public:
  using Base::Base;

  // Adds `tile` to the tile of the tensor at tile coordinate `index` (one per axis; the tile's
  // shape is `tile`'s): element i lands at index * shape + i. Elements past the tensor's edge
  // are dropped.
  void add(const Tile<T>& tile, std::initializer_list<IndexArg> index,
           std::source_location l = std::source_location::current()) const {
    std::vector<ir::ValueId> operands{tile.value(l)};
    const Shape& shape = tile.shape();
    size_t d = 0;
    for (const IndexArg& i : index) {
      const int64_t extent = d < shape.size() ? shape[d] : 1;
      operands.push_back(detail::emit_binary(
          ir::OpKind::Mul, i.get(),
          detail::emit_constant(DType::I32, static_cast<double>(extent), l), l));
      ++d;
    }
    emit_add(std::move(operands), l);
  }
  // Adds `tile` with its first element at element `start` of the tensor (one int or Index per
  // axis, any values: a bin range of a histogram). Elements outside the tensor are dropped.
  void add_at(const Tile<T>& tile, std::initializer_list<IndexArg> start,
              std::source_location l = std::source_location::current()) const {
    std::vector<ir::ValueId> operands{tile.value(l)};
    for (const IndexArg& i : start) operands.push_back(i.get());
    emit_add(std::move(operands), l);
  }

  // An Accum is only added into: these overloads exist only to say so.
  template <class... Args>
  void store(Args&&...) const {
    static_assert(detail::always_false<Args...>,
                  "store() on an Accum<T> parameter: other blocks' tiles may overlap this one, "
                  "so the only write is an add that commutes, acc.add(tile, {i, j}); to "
                  "overwrite a tile, declare the parameter Out<T> and pass a partition");
  }
  template <class... Args>
  void store_part(Args&&...) const {
    static_assert(detail::always_false<Args...>,
                  "store_part() on an Accum<T> parameter: the only write is an add, "
                  "acc.add_at(tile, {start...})");
  }

 private:
  void emit_add(std::vector<ir::ValueId> operands, SourceLoc l) const {
    ir::Attrs a;
    a.param = index_;
    detail::emit(ir::OpKind::Accumulate, std::move(operands), a, l);
  }
};

template <Element T, int R = kDynamicRank>
class In : public detail::TensorParam<T, R> {
 public:
  using detail::TensorParam<T, R>::TensorParam;

  // Inputs are read-only: this overload exists only to say so.
  template <class... Args>
  void store(Args&&...) const {
    static_assert(detail::always_false<Args...>,
                  "store() on an In<T> parameter: kernel inputs are read-only. Declare the "
                  "parameter Out<T> and pass a partition (std::move(t).partition(tile)) to write it.");
  }
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
// `at_element`: `index` holds the tile's first element along each axis, not its tile coordinate.
ir::ValueId emit_load(int param, std::span<const ir::ValueId> index, const Shape& shape, Pad pad,
                      SourceLoc loc, bool at_element = false);
}  // namespace detail

// The tile of `shape` at tile coordinate `index` of x: elements [index[d] * shape[d], ...).
template <Element T, int R>
Tile<T> load(const In<T, R>& x, std::initializer_list<IndexArg> index, Shape shape, Pad pad = {},
             std::source_location l = std::source_location::current()) {
  std::vector<ir::ValueId> idx;
  for (const IndexArg& i : index) idx.push_back(i.get());
  return Tile<T>(detail::emit_load(x.index(), idx, shape, pad, l));
}

// An Accum is never read inside the launch that adds into it: this overload exists only to say so.
template <Element T, int R>
Tile<T> load(const Accum<T, R>&, std::initializer_list<IndexArg>, Shape, Pad = {},
             std::source_location = std::source_location::current()) {
  static_assert(detail::always_false<T>,
                "load() of an Accum<T> parameter: other blocks add into it while this one runs, "
                "so a read would see a timing-dependent partial sum; read the sums in a later "
                "launch, passing the tensor as an In<T>");
  return Tile<T>(ir::ValueId{});
}

// The tile of `shape` whose first element is element `start` of x (one index per axis, any
// values: a sliding window, a halo, the row at a run-time position), padded like load().
template <Element T, int R>
Tile<T> load_at(const In<T, R>& x, std::initializer_list<IndexArg> start, Shape shape, Pad pad = {},
                std::source_location l = std::source_location::current()) {
  std::vector<ir::ValueId> idx;
  for (const IndexArg& i : start) idx.push_back(i.get());
  return Tile<T>(detail::emit_load(x.index(), idx, shape, pad, l, /*at_element=*/true));
}

// "This kernel reads x (all of it, or most): warm the cache with it." On sm_90 the GPU backend
// starts moving x into L2 while the kernel still waits for the kernel before it on the stream,
// each block a slice; tensors over 32 MB are left alone (docs/async.md). Results never change (the
// CPU backend ignores it). Call it in the kernel's body, outside loops and branches, on an In
// parameter: on an Out or an Accum, or inside a for_range / if_ body, it is a KernelError at the
// call's line. Not for inputs read only in part (a KV cache read up to a run-time length).
template <Element T, int R>
void prefetch(const detail::TensorParam<T, R>& x,
              std::source_location l = std::source_location::current()) {
  ir::Attrs a;
  a.param = x.index();
  detail::emit(ir::OpKind::Prefetch, {}, a, l);
}

namespace detail {
ir::ValueId emit_gather(int param, ir::ValueId rows, std::span<const ir::ValueId> start,
                        const Shape& shape, Pad pad, SourceLoc loc);
}  // namespace detail

// Element `at` of x as a scalar (one index per axis, ints or Index values): a length, a position,
// a table entry. Outside the tensor it reads the pad, or with Pad::none() is a BoundsError.
template <Element T, int R>
Tile<T> load_element(const In<T, R>& x, std::initializer_list<IndexArg> at, Pad pad = {},
                     std::source_location l = std::source_location::current()) {
  std::vector<ir::ValueId> idx;
  for (const IndexArg& i : at) idx.push_back(i.get());
  const Shape ones(idx.size(), 1);
  return Tile<T>(detail::emit_load(x.index(), idx, ones, pad, l, /*at_element=*/true))
      .reshape({}, l);
}

// Rows of x chosen by an index tile (rows of an embedding table, pages of a paged KV cache):
// element (i, j, ...) of the result is element (rows[i], start[0] + j, ...) of x. `rows` is an
// i32 tile [shape[0]]; `start` has one element per axis after the first (ints or Index values,
// like load_at's). Reading anywhere is race-free: x is read-only. A row index outside x is a
// BoundsError (the GPU reads the pad for it and never outside x, then reports); elements past
// the edge along the other axes read the pad, or with Pad::none() are a BoundsError too.
template <Element T, int R>
Tile<T> gather(const In<T, R>& x, const Tile<int32_t>& rows, std::initializer_list<IndexArg> start,
               Shape shape, Pad pad = {},
               std::source_location l = std::source_location::current()) {
  const ir::ValueId rv = rows.value(l);
  std::vector<ir::ValueId> idx;
  for (const IndexArg& i : start) idx.push_back(i.get());
  return Tile<T>(detail::emit_gather(x.index(), rv, idx, shape, pad, l));
}

// The tile at tile coordinate `index` of x with its last two axes swapped (a K^T tile straight
// from K): load_t(x, {i, j}, {R, C})[r, c] = x[j * C + c, i * R + r], padded like load(). On the
// GPU the swap goes through shared memory, like transpose().
template <Element T, int R>
Tile<T> load_t(const In<T, R>& x, std::initializer_list<IndexArg> index, Shape shape, Pad pad = {},
               std::source_location l = std::source_location::current()) {
  std::vector<ir::ValueId> idx;
  for (const IndexArg& i : index) idx.push_back(i.get());
  if (idx.size() < 2 || shape.size() < 2)
    fail_at<KernelError>(l,
                         "load_t swaps the last two axes, so it needs a tensor and a tile of "
                         "rank 2 or more, not rank ",
                         shape.size(), "; use load for rank 1");
  std::swap(idx[idx.size() - 1], idx[idx.size() - 2]);
  Shape swapped = shape;
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  return Tile<T>(detail::emit_load(x.index(), idx, swapped, pad, l)).transpose(l);
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

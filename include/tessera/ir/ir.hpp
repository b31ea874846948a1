// The tile IR: SSA values that are whole tiles (a dtype and a static shape; rank 0 is a scalar),
// ops from the table in ops.def, and structured regions (one block each) for `for` and `if`,
// whose block arguments carry loop values. Plain data: passes read and rewrite it directly, the
// verifier states what must hold.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/core/dtype.hpp"
#include "tessera/core/error.hpp"
#include "tessera/core/shape.hpp"

namespace tessera::ir {

enum class OpKind : uint8_t {
#define TESSERA_OP(E, mnemonic, nops, nres, nreg, cls) E,
#include "tessera/ir/ops.def"
#undef TESSERA_OP
};

enum class OpClass : uint8_t {
  Interface,
  Creation,
  Unary,
  UnaryFloat,
  UnaryBool,
  Classify,
  Cast,
  Binary,
  BinaryBool,
  BinaryFloat,
  BinaryInt,
  Compare,
  Select,
  Ternary,
  Broadcast,
  Reshape,
  Permute,
  Slice,
  Reduce,
  ArgReduce,
  Scan,
  Mma,
  Load,
  Gather,
  Store,
  Prefetch,
  For,
  If,
  Yield,
  Print,
  Local,
};

struct OpInfo {
  std::string_view mnemonic;
  int operands;  // -1: variadic
  int results;   // -1: variadic
  int regions;
  OpClass cls;
};
const OpInfo& op_info(OpKind k);
inline std::string_view mnemonic(OpKind k) {
  return op_info(k).mnemonic;
}
// Classes whose ops compute each result element from the same elements of their operands, with
// no memory access, no exchange between elements and no region (unary, binary, compare, cast,
// select, ternary ops): they can run on any subset of a tile's elements, in any order. The one
// answer every pass and backend asks, so a new elementwise class is added here once.
bool is_elementwise(OpClass c);
// Ops whose place is the kernel's statement order: stores (and accumulations), prefetches, prints,
// loops, branches, yields and locals. Every other op is pure, a function of its operands that a
// pass may place anywhere after them (canonical_order, the CUDA backend's issue_loads_first).
bool is_anchor(OpClass c);

struct Type {
  DType dtype = DType::F32;
  Shape shape;  // empty: a scalar

  int rank() const { return static_cast<int>(shape.size()); }
  bool is_scalar() const { return shape.empty(); }
  friend bool operator==(const Type&, const Type&) = default;
};
std::string to_string(const Type& t);  // "f32[64, 64]", "i32"
using tessera::to_string;

using ValueId = uint32_t;

// Attributes. Each op kind reads the fields its row documents; the rest stay default.
struct Attrs {
  int axis = -1;              // tile_index, num_tiles, dim, iota, reductions, scans, slice, concat
  int param = -1;             // which kernel parameter: scalar_param, dim, load, gather, store
  int var = -1;               // local_load / local_store
  Shape shape;                // constant, iota, broadcast, reshape, load
  std::vector<int64_t> perm;  // permute
  double value = 0;           // constant; load's padding value
  // An integer constant's exact value (`value` holds it as a double, exact only to 2^53). Read
  // it through integer_constant(), which falls back to `value` for IR built without it.
  std::optional<int64_t> exact;
  bool padded = true;       // load: pad out-of-tensor elements (else they are a bounds error)
  bool exclusive = false;   // scans: element i covers 0..i-1 (else 0..i)
  bool descending = false;  // sort, argsort: largest first (else smallest first)
  // load: the operands are the element where the tile starts along each axis (load_at), not its
  // tile coordinate.
  bool at_element = false;
  int64_t start = 0;         // slice: the first element taken along `axis`
  int64_t length = 0;        // slice: how many elements it takes
  DType dtype = DType::F32;  // constant, iota, cast: the result dtype
  // mma of f32 operands: each operand element rounded to TF32 (10 fraction bits, to nearest, ties
  // away from zero) before the exact products are summed in f32: tensor cores on the GPU
  // (docs/dsl.md, "Matrix multiply precision"). Only asked for by the user; never chosen for them.
  bool tf32 = false;
  std::string text;  // print
  friend bool operator==(const Attrs&, const Attrs&) = default;
};

// The value of an integer constant: `exact` when present, else `value` truncated and saturated to
// int64 (what a cast of the double would give).
int64_t integer_constant(const Attrs& a);

struct Op;

// A region: one block with arguments, its ops in order; it ends with a yield when it belongs to
// a for or if.
struct Block {
  std::vector<ValueId> args;
  std::vector<Op> ops;
};

struct Op {
  OpKind kind;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<Block> regions;
  Attrs attrs;
  SourceLoc loc;
};

// Accum: a tensor the launch holds exclusively, like an Out, but which blocks only add into
// (ops.def, accumulate), anywhere: its tiles may overlap, since additions commute.
enum class ParamKind : uint8_t { Out, In, Scalar, Accum };
std::string_view to_string(ParamKind k);

struct Param {
  std::string name;
  ParamKind kind;
  DType dtype;
  int rank = 0;      // tensors: rank of the tensor (a scalar: 0)
  Shape tile_shape;  // Out: this block's tile, fixed by the partition
  // Accum: the rank of the grid its launch declares (accumulate(grid)); 0 when the launch's Out
  // partitions define the grid. Read only while tracing (it sets Function::grid_rank).
  int grid_rank = 0;
};

// How a kernel's floating-point math may be lowered (docs/dsl.md, "Numerics"). `exact`: every
// backend computes what the CPU backend computes (IEEE division, libm-accurate exp and log,
// NaN-checking max). `fast`: the GPU may use its approximate instructions for f32 math, each within
// the error bound docs/dsl.md states; NaN still propagates through max and min.
enum class Numerics : uint8_t { exact, fast };
std::string_view to_string(Numerics n);

// Which invariants hold: right after tracing, locals may remain; after promote_locals they may not.
enum class Stage : uint8_t { Traced, Promoted };

struct Function {
  std::string name;
  std::vector<Param> params;
  int grid_rank = 0;  // the grid's rank: its Out partitions', else its Accum's grid's
  Numerics numerics = Numerics::exact;
  std::vector<Type> values;  // type of each ValueId
  std::vector<Type> vars;    // type of each tracer-local variable
  Block body;
  Stage stage = Stage::Traced;
  SourceLoc loc;  // where the kernel is defined

  const Type& type(ValueId v) const { return values.at(v); }
  ValueId new_value(Type t) {
    values.push_back(std::move(t));
    return static_cast<ValueId>(values.size() - 1);
  }
};

// Calls f(op) for every op, nested regions first-to-last in program order (pre-order).
template <class F>
void walk(Block& b, F&& f) {
  for (Op& op : b.ops) {
    f(op);
    for (Block& r : op.regions) walk(r, f);
  }
}
template <class F>
void walk(const Block& b, F&& f) {
  for (const Op& op : b.ops) {
    f(op);
    for (const Block& r : op.regions) walk(r, f);
  }
}

}  // namespace tessera::ir

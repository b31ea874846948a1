#include "tessera/ir/infer.hpp"

#include <algorithm>
#include <optional>

#include "tessera/core/checked.hpp"

namespace tessera::ir {
namespace {

using detail::cat;

Inferred ok(Type t) { return {{std::move(t)}, {}}; }
Inferred none() { return {}; }
template <class... Args>
Inferred bad(Args&&... args) {
  return {{}, cat(std::forward<Args>(args)...)};
}

Type scalar(DType d) { return Type{d, {}}; }

bool is_i32_scalar(const Type& t) { return t.is_scalar() && t.dtype == DType::I32; }

Inferred check_tensor_param(const Function& f, const Attrs& a, const char* what) {
  if (a.param < 0 || a.param >= static_cast<int>(f.params.size()))
    return bad(what, " names parameter ", a.param, ", but the kernel has ", f.params.size());
  return none();
}

// "an Out", "an In", ...: how a message names a parameter's kind.
const char* kind_phrase(ParamKind k) {
  switch (k) {
    case ParamKind::Out:
      return "an Out";
    case ParamKind::In:
      return "an In";
    case ParamKind::Scalar:
      return "a Scalar";
    case ParamKind::Accum:
      return "an Accum";
  }
  return "a";
}

bool has_accum(const Function& f) {
  for (const Param& p : f.params)
    if (p.kind == ParamKind::Accum) return true;
  return false;
}

// The dtypes an Accum holds: those the GPU adds atomically with a result the CPU backend's
// ordered sum matches to rounding (atomicAdd on f32, f64, i32 and i64 words).
bool accumulable(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::I32 || t == DType::I64;
}

// Whether `shape` holds at most kMaxTileElements, counted without wrapping.
bool fits_a_tile(const Shape& shape) {
  int64_t n = 1;
  for (int64_t e : shape) {
    if (e <= 0) return true;  // empty and negative extents are each rule's own error
    const std::optional<int64_t> next = checked_mul(n, e);
    if (!next || *next > kMaxTileElements) return false;
    n = *next;
  }
  return true;
}

std::string too_large(std::string_view mnemonic, const std::string& what) {
  return cat(mnemonic, " makes a tile of shape ", what, ", more than ", kMaxTileElements,
             " elements, the most one tile may hold (a tile is one block's working set); use a "
             "smaller tile");
}

Inferred infer_rules(const Function& f, OpKind kind, std::span<const ValueId> operands,
                     const Attrs& a);

}  // namespace

// Every tile has at most kMaxTileElements elements: checked on the shape an op is given (before
// any rule multiplies its extents) and on every result type (an mma of two legal tiles, a
// broadcast, can make a larger one).
Inferred infer_types(const Function& f, OpKind kind, std::span<const ValueId> operands,
                     const Attrs& a) {
  const std::string_view mnemonic = op_info(kind).mnemonic;
  if (!fits_a_tile(a.shape)) return bad(too_large(mnemonic, to_string(a.shape)));
  Inferred inferred = infer_rules(f, kind, operands, a);
  for (const Type& t : inferred.types)
    if (!fits_a_tile(t.shape)) return bad(too_large(mnemonic, to_string(t)));
  return inferred;
}

namespace {

Inferred infer_rules(const Function& f, OpKind kind, std::span<const ValueId> operands,
                     const Attrs& a) {
  const OpInfo& info = op_info(kind);
  if (info.operands >= 0 && static_cast<int>(operands.size()) != info.operands)
    return bad(info.mnemonic, " takes ", info.operands, " operands, not ", operands.size());
  for (ValueId v : operands)
    if (v >= f.values.size()) return bad(info.mnemonic, " uses an undefined value");
  auto T = [&](size_t i) -> const Type& { return f.type(operands[i]); };

  // fp8 tiles are storage (load, store, cast, select, shape ops); arithmetic, comparisons and
  // reductions take a cast to a wider float first, which is what fp8 GEMMs and quantizers do.
  {
    using C = OpClass;
    const C c = info.cls;
    const bool computes = c == C::Unary || c == C::UnaryFloat || c == C::UnaryBool ||
                          c == C::Classify || c == C::Binary || c == C::BinaryBool ||
                          c == C::BinaryFloat || c == C::BinaryInt || c == C::Compare ||
                          c == C::Ternary || c == C::Reduce || c == C::ArgReduce || c == C::Scan ||
                          c == C::Mma;
    for (size_t i = 0; computes && i < operands.size(); ++i)
      if (is_fp8(T(i).dtype))
        return bad(info.mnemonic, " of a ", to_string(T(i)), " tile: ", dtype_name(T(i).dtype),
                   " is a storage type with no arithmetic; cast it to f16 or f32 first "
                   "(x.cast<float>()), and cast the result back to store it");
  }

  switch (info.cls) {
    case OpClass::Interface:
      if (kind == OpKind::TileIndex || kind == OpKind::NumTiles) {
        if (a.axis < 0 || a.axis >= f.grid_rank)
          return bad(info.mnemonic, "(", a.axis, ") is outside the grid, which has rank ",
                     f.grid_rank,
                     has_accum(f) ? " (the rank of the kernel's Out partitions, or of its "
                                    "Accum's grid)"
                                  : " (the rank of the kernel's Out partitions)");
        return ok(scalar(DType::I32));
      }
      if (auto e = check_tensor_param(f, a, info.mnemonic.data()); !e.ok()) return e;
      if (kind == OpKind::ScalarParam) {
        if (f.params[a.param].kind != ParamKind::Scalar)
          return bad("parameter '", f.params[a.param].name, "' is not a Scalar");
        return ok(scalar(f.params[a.param].dtype));
      }
      {  // dim
        const Param& p = f.params[a.param];
        if (p.kind == ParamKind::Scalar) return bad("'", p.name, "' is a Scalar and has no dims");
        if (a.axis < 0 || a.axis >= p.rank)
          return bad("dim(", a.axis, ") of '", p.name, "', which has rank ", p.rank);
        return ok(scalar(DType::I64));
      }
    case OpClass::Creation:
      for (int64_t d : a.shape)
        if (d <= 0) return bad(info.mnemonic, " shape ", to_string(a.shape), " has an empty axis");
      if (kind == OpKind::Iota) {
        if (a.axis < 0 || a.axis >= static_cast<int>(a.shape.size()))
          return bad("iota axis ", a.axis, " is outside its shape ", to_string(a.shape));
        if (a.dtype == DType::Bool) return bad("iota cannot make a bool tile");
      }
      return ok(Type{a.dtype, a.shape});
    case OpClass::Unary:
      if (T(0).dtype == DType::Bool) return bad(info.mnemonic, " needs numbers, not bool");
      return ok(T(0));
    case OpClass::UnaryFloat:
      if (!is_float(T(0).dtype))
        return bad(info.mnemonic, " needs a floating-point tile, not ", to_string(T(0)),
                   "; cast it first");
      return ok(T(0));
    case OpClass::UnaryBool:
      if (is_float(T(0).dtype))
        return bad(info.mnemonic, " needs a bool or integer tile (logical or bitwise), not ",
                   to_string(T(0)));
      return ok(T(0));
    case OpClass::Classify:
      if (!is_float(T(0).dtype))
        return bad(info.mnemonic, " needs a floating-point tile, not ", to_string(T(0)),
                   " (an integer is never NaN or infinite)");
      return ok(Type{DType::Bool, T(0).shape});
    case OpClass::Cast:
      return ok(Type{a.dtype, T(0).shape});
    case OpClass::Binary:
    case OpClass::BinaryBool:
    case OpClass::BinaryFloat:
    case OpClass::BinaryInt:
    case OpClass::Compare:
      if (T(0) != T(1))
        return bad(info.mnemonic, " needs operands of one type, not ", to_string(T(0)), " and ",
                   to_string(T(1)));
      if (info.cls == OpClass::Binary && T(0).dtype == DType::Bool)
        return bad(info.mnemonic, " needs numbers, not bool");
      if (info.cls == OpClass::BinaryBool && is_float(T(0).dtype))
        return bad(info.mnemonic, " needs bool or integer tiles, not ", to_string(T(0)));
      if (info.cls == OpClass::BinaryFloat && !is_float(T(0).dtype))
        return bad(info.mnemonic, " needs floating-point tiles, not ", to_string(T(0)),
                   "; cast them first", kind == OpKind::Fmod ? " (or use % on integers)" : "");
      if (info.cls == OpClass::BinaryInt && !is_int(T(0).dtype))
        return bad(info.mnemonic, " needs integer tiles, not ", to_string(T(0)),
                   kind == OpKind::Rem ? "; use fmod(a, b) for floats" : "");
      if (info.cls == OpClass::Compare) return ok(Type{DType::Bool, T(0).shape});
      return ok(T(0));
    case OpClass::Select:
      if (T(0).dtype != DType::Bool) return bad("select's condition must be bool, not ",
                                                to_string(T(0)));
      if (T(1) != T(2))
        return bad("select needs two branches of one type, not ", to_string(T(1)), " and ",
                   to_string(T(2)));
      if (T(0).shape != T(1).shape)
        return bad("select's condition ", to_string(T(0)), " and branches ", to_string(T(1)),
                   " differ in shape");
      return ok(T(1));
    case OpClass::Ternary:
      if (T(0) != T(1) || T(0) != T(2))
        return bad(info.mnemonic, " needs three operands of one type, not ", to_string(T(0)), ", ",
                   to_string(T(1)), " and ", to_string(T(2)));
      if (T(0).dtype == DType::Bool) return bad(info.mnemonic, " needs numbers, not bool");
      return ok(T(0));
    case OpClass::Broadcast: {
      const Type& t = T(0);
      if (a.shape.size() != t.shape.size())
        return bad("broadcast from ", to_string(t), " to ", to_string(a.shape),
                   " changes the rank; reshape first");
      for (size_t i = 0; i < a.shape.size(); ++i)
        if (t.shape[i] != a.shape[i] && t.shape[i] != 1)
          return bad("cannot broadcast ", to_string(t), " to ", to_string(a.shape), ": axis ", i,
                     " has extent ", t.shape[i], ", which is neither 1 nor ", a.shape[i]);
      return ok(Type{t.dtype, a.shape});
    }
    case OpClass::Reshape:
      if (numel(a.shape) != numel(T(0).shape) ||
          std::any_of(a.shape.begin(), a.shape.end(), [](int64_t d) { return d <= 0; }))
        return bad("cannot reshape ", to_string(T(0)), " (", numel(T(0).shape),
                   " elements) to ", to_string(a.shape), " (", numel(a.shape), " elements)");
      return ok(Type{T(0).dtype, a.shape});
    case OpClass::Permute: {
      const Type& t = T(0);
      std::vector<int64_t> sorted = a.perm;
      std::sort(sorted.begin(), sorted.end());
      bool is_perm = sorted.size() == t.shape.size();
      for (size_t i = 0; is_perm && i < sorted.size(); ++i) is_perm = sorted[i] == int64_t(i);
      if (!is_perm)
        return bad("permute order ", to_string(a.perm), " is not a permutation of the ",
                   t.rank(), " axes of ", to_string(t));
      Shape s(t.shape.size());
      for (size_t i = 0; i < s.size(); ++i) s[i] = t.shape[a.perm[i]];
      return ok(Type{t.dtype, s});
    }
    case OpClass::Slice: {
      if (operands.empty()) return bad(info.mnemonic, " needs at least one tile");
      Type t = T(0);
      if (t.is_scalar())
        return bad(info.mnemonic, " of a scalar; it works along an axis of a tile");
      if (a.axis < 0 || a.axis >= t.rank())
        return bad(info.mnemonic, " along axis ", a.axis, " of ", to_string(t), ", which has rank ",
                   t.rank());
      const int64_t extent = t.shape[a.axis];
      if (kind == OpKind::Slice) {
        const std::optional<int64_t> end = checked_add(a.start, a.length);
        if (a.start < 0 || a.length <= 0 || !end || *end > extent)
          return bad("slice [", a.start, ", ", a.start, " + ", a.length, ") along axis ", a.axis,
                     " of a ", to_string(t), " tile is outside its extent ", extent,
                     "; take 0 <= start and 0 < length <= ", extent, " - start");
        t.shape[a.axis] = a.length;
        return ok(t);
      }
      for (size_t i = 1; i < operands.size(); ++i) {
        Shape want = T(i).shape, have = t.shape;
        bool same = T(i).dtype == t.dtype && want.size() == have.size();
        if (same) want[a.axis] = have[a.axis] = 0;
        if (!same || want != have)
          return bad("concat along axis ", a.axis, " of a ", to_string(T(0)), " and a ",
                     to_string(T(i)),
                     " tile; the tiles need one dtype and one extent on every other axis");
        const std::optional<int64_t> sum = checked_add(t.shape[a.axis], T(i).shape[a.axis]);
        if (!sum) return bad("concat makes an axis too long to count");
        t.shape[a.axis] = *sum;
      }
      return ok(t);
    }
    case OpClass::Reduce: {
      Type t = T(0);
      if (a.axis < 0 || a.axis >= t.rank())
        return bad(info.mnemonic, " along axis ", a.axis, " of ", to_string(t), ", which has rank ",
                   t.rank());
      const bool logical = kind == OpKind::ReduceAny || kind == OpKind::ReduceAll;
      if (logical && t.dtype != DType::Bool)
        return bad(info.mnemonic, " needs a bool tile, not ", to_string(t),
                   "; compare first (x != 0)");
      if (!logical && t.dtype == DType::Bool) return bad(info.mnemonic, " needs numbers, not bool");
      t.shape[a.axis] = 1;
      return ok(t);
    }
    case OpClass::ArgReduce: {
      Type t = T(0);
      if (a.axis < 0 || a.axis >= t.rank())
        return bad(info.mnemonic, " along axis ", a.axis, " of ", to_string(t), ", which has rank ",
                   t.rank());
      if (t.dtype == DType::Bool) return bad(info.mnemonic, " needs numbers, not bool");
      t.shape[a.axis] = 1;
      t.dtype = DType::I32;
      return ok(t);
    }
    case OpClass::Scan: {
      const Type& t = T(0);
      if (a.axis < 0 || a.axis >= t.rank())
        return bad(info.mnemonic, " along axis ", a.axis, " of ", to_string(t), ", which has rank ",
                   t.rank());
      if (t.dtype == DType::Bool) return bad(info.mnemonic, " needs numbers, not bool");
      if (kind == OpKind::ArgSort) return ok(Type{DType::I32, t.shape});
      return ok(t);
    }
    case OpClass::Mma: {
      const Type &ta = T(0), &tb = T(1), &tc = T(2);
      if (ta.rank() != 2 || tb.rank() != 2 || tc.rank() != 2)
        return bad("mma needs 2-D tiles, not ", to_string(ta), ", ", to_string(tb), ", ",
                   to_string(tc));
      if (ta.shape[1] != tb.shape[0] || tc.shape[0] != ta.shape[0] || tc.shape[1] != tb.shape[1])
        return bad("mma shapes do not chain: a ", to_string(ta), " @ b ", to_string(tb),
                   " does not give acc ", to_string(tc));
      if (ta.dtype != tb.dtype)
        return bad("mma operands a and b have different dtypes: ", to_string(ta), " and ",
                   to_string(tb));
      const DType in = ta.dtype, acc = tc.dtype;
      const bool fits = (in == DType::F16 || in == DType::BF16) ? (acc == DType::F32 || acc == in)
                        : (in == DType::F32 || in == DType::F64) ? acc == in
                        : (in == DType::I8) ? acc == DType::I32
                                            : false;
      if (!fits)
        return bad("mma of ", dtype_name(in), " operands cannot accumulate in ", dtype_name(acc),
                   " (f16/bf16 accumulate in f32 or themselves, f32 in f32, f64 in f64, i8 in i32)");
      if (a.tf32 && in != DType::F32)
        return bad("mma with Precision::tf32 rounds f32 operands to TF32, but these are ",
                   dtype_name(in), "; drop Precision::tf32, or pass f32 tiles");
      return ok(tc);
    }
    case OpClass::Gather: {
      if (auto e = check_tensor_param(f, a, "gather"); !e.ok()) return e;
      const Param& p = f.params[a.param];
      if (p.kind != ParamKind::In)
        return bad("gather from '", p.name, "', which is ", kind_phrase(p.kind),
                   " parameter; only In parameters are loaded");
      if (p.rank < 1 || static_cast<int>(a.shape.size()) != p.rank)
        return bad("gather from '", p.name, "' asks for a tile of shape ", to_string(a.shape),
                   ", but the tensor has rank ", p.rank);
      if (static_cast<int>(operands.size()) != p.rank)
        return bad("gather from '", p.name, "' gives ", operands.size() - 1,
                   " start elements, but a tensor of rank ", p.rank, " needs ", p.rank - 1,
                   " (one per axis after the first)");
      if (T(0).dtype != DType::I32 || T(0).shape != Shape{a.shape[0]})
        return bad("gather from '", p.name, "' takes its rows from an i32[", a.shape[0],
                   "] tile (one index per row of the ", to_string(a.shape), " result), not ",
                   to_string(T(0)), "; reshape or cast the indices first");
      for (size_t i = 1; i < operands.size(); ++i)
        if (!is_i32_scalar(T(i)))
          return bad("start element ", i - 1, " of a gather from '", p.name,
                     "' must be an i32 scalar, not ", to_string(T(i)));
      return ok(Type{p.dtype, a.shape});
    }
    case OpClass::Load: {
      if (auto e = check_tensor_param(f, a, "load"); !e.ok()) return e;
      const Param& p = f.params[a.param];
      if (p.kind != ParamKind::In)
        return bad("load from '", p.name, "', which is ", kind_phrase(p.kind),
                   " parameter; only In parameters are loaded");
      if (static_cast<int>(operands.size()) != p.rank)
        return bad("load from '", p.name, "' gives ", operands.size(),
                   " tile indices, but the tensor has rank ", p.rank);
      if (static_cast<int>(a.shape.size()) != p.rank)
        return bad("load from '", p.name, "' asks for a tile of shape ", to_string(a.shape),
                   ", but the tensor has rank ", p.rank);
      for (size_t i = 0; i < operands.size(); ++i)
        if (!is_i32_scalar(T(i)))
          return bad("tile index ", i, " of a load from '", p.name, "' must be an i32 scalar, not ",
                     to_string(T(i)));
      for (int64_t d : a.shape)
        if (d <= 0) return bad("load tile shape ", to_string(a.shape), " has an empty axis");
      return ok(Type{p.dtype, a.shape});
    }
    case OpClass::Store: {
      if (auto e = check_tensor_param(f, a, "store"); !e.ok()) return e;
      const Param& p = f.params[a.param];
      if (kind == OpKind::Accumulate) {
        if (p.kind != ParamKind::Accum)
          return bad("accumulate into '", p.name, "', which is ", kind_phrase(p.kind),
                     " parameter; declare it Accum<", dtype_name(p.dtype), "> to add into it");
        if (!accumulable(p.dtype))
          return bad("accumulate into '", p.name, "', an Accum<", dtype_name(p.dtype),
                     ">: adds are atomic on the GPU, which holds them for f32, f64, i32 and i64 "
                     "only; accumulate in f32 (or i32) and cast the result afterwards");
        if (operands.empty()) return bad("accumulate into '", p.name, "' has no value");
        const Type& v = T(0);
        if (v.dtype != p.dtype || v.rank() != p.rank)
          return bad("accumulate of a ", to_string(v), " tile into '", p.name, "', an Accum<",
                     dtype_name(p.dtype), "> of rank ", p.rank,
                     ": the tile has the tensor's dtype and rank");
        if (operands.size() != 1 + static_cast<size_t>(p.rank))
          return bad("accumulate into '", p.name, "' gives ", operands.size() - 1,
                     " start elements, but the tensor has rank ", p.rank);
        for (size_t i = 1; i < operands.size(); ++i)
          if (!is_i32_scalar(T(i)))
            return bad("start element ", i - 1, " of an accumulate into '", p.name,
                       "' must be an i32 scalar, not ", to_string(T(i)));
        return none();
      }
      if (p.kind != ParamKind::Out)
        return bad("store to '", p.name, "', which is not an Out parameter; declare it Out<",
                   dtype_name(p.dtype), "> to write it");
      if (kind == OpKind::StorePart) {
        if (operands.empty()) return bad("store_part to '", p.name, "' has no value");
        const Type& piece = T(0);
        if (p.tile_shape.empty() || piece.dtype != p.dtype ||
            piece.rank() != static_cast<int>(p.tile_shape.size()))
          return bad("store_part of a ", to_string(piece), " piece to '", p.name,
                     "', whose tiles are ", to_string(Type{p.dtype, p.tile_shape}),
                     ": a piece has the tile's dtype and rank (and the tile at least one axis)");
        if (operands.size() != 1 + p.tile_shape.size())
          return bad("store_part to '", p.name, "' gives ", operands.size() - 1,
                     " offsets, but its tiles have rank ", p.tile_shape.size());
        for (size_t i = 1; i < operands.size(); ++i)
          if (!is_i32_scalar(T(i)))
            return bad("offset ", i - 1, " of a store_part to '", p.name,
                       "' must be an i32 scalar, not ", to_string(T(i)));
        for (size_t d = 0; d < p.tile_shape.size(); ++d)
          if (piece.shape[d] > p.tile_shape[d])
            return bad("store_part of a ", to_string(piece), " piece to '", p.name,
                       "', whose tiles are ", to_string(Type{p.dtype, p.tile_shape}),
                       ": the piece is larger than the tile along axis ", d,
                       "; a block writes only its own tile");
        return none();
      }
      const Type want{p.dtype, p.tile_shape};
      if (T(0) != want)
        return bad("store of a ", to_string(T(0)), " tile to '", p.name, "', whose tiles are ",
                   to_string(want));
      return none();
    }
    case OpClass::Prefetch: {
      if (auto e = check_tensor_param(f, a, "prefetch"); !e.ok()) return e;
      const Param& p = f.params[a.param];
      if (p.kind != ParamKind::In)
        return bad("prefetch of '", p.name, "', which is ", kind_phrase(p.kind),
                   " parameter; only an In parameter, which no block writes, may be fetched "
                   "before the kernels before this one have finished");
      return none();
    }
    case OpClass::For: {
      if (operands.size() < 3) return bad("for needs a lower bound, an upper bound and a step");
      for (size_t i = 0; i < 3; ++i)
        if (!is_i32_scalar(T(i))) return bad("for bounds and step must be i32 scalars");
      Inferred r;
      for (size_t i = 3; i < operands.size(); ++i) r.types.push_back(T(i));
      return r;
    }
    case OpClass::If:
      if (operands.size() != 1 || T(0) != scalar(DType::Bool))
        return bad("if needs one bool scalar condition");
      return none();
    case OpClass::Yield:
      return none();
    case OpClass::Print: {
      size_t holes = 0;
      for (size_t i = 0; i + 1 < a.text.size(); ++i)
        if (a.text[i] == '{' && a.text[i + 1] == '}') ++holes, ++i;
      if (holes != operands.size())
        return bad("print format \"", a.text, "\" has ", holes, " {} but ", operands.size(),
                   " values follow");
      for (size_t i = 0; i < operands.size(); ++i)
        if (!T(i).is_scalar()) return bad("print takes scalars, not a ", to_string(T(i)), " tile");
      return none();
    }
    case OpClass::Local:
      if (a.var < 0 || a.var >= static_cast<int>(f.vars.size()))
        return bad(info.mnemonic, " of an undefined variable");
      if (kind == OpKind::LocalLoad) return ok(f.vars[a.var]);
      if (T(0) != f.vars[a.var])
        return bad("local_store of ", to_string(T(0)), " to a variable of type ",
                   to_string(f.vars[a.var]));
      return none();
  }
  return bad("no typing rule for ", info.mnemonic);
}

}  // namespace

}  // namespace tessera::ir

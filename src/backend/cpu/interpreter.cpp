#include "tessera/backend/cpu/interpreter.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <iostream>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <thread>

#include "tessera/backend/cpu/elements.hpp"
#include "tessera/core/checked.hpp"

namespace tessera::backend::cpu {
namespace {

using ir::OpKind;
using ir::ValueId;

// A tile value: elements in row-major order, held as Values (elements.hpp: integers exact)
// already rounded to `dtype`.
struct TileData {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<Value> v;
};

// An f32 value rounded to TF32 as the GPU's cvt.rna.tf32.f32 rounds it (Precision::tf32): to
// nearest with ties away from zero, keeping 10 fraction bits; NaN and infinities unchanged.
Value round_tf32(Value x) {
  const float f = static_cast<float>(x);
  if (!std::isfinite(f)) return x;
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u = (u + 0x1000u) & 0xFFFFE000u;  // half of the dropped 13 bits' unit, then drop them
  float r;
  std::memcpy(&r, &u, sizeof r);
  return static_cast<Value>(r);
}

struct BlockState {
  const ir::Function& f;
  const LaunchArgs& args;
  Shape coord;                   // this block's coordinate in the grid
  std::vector<TileData> values;  // indexed by ValueId
  std::string printed;           // this block's print output, flushed whole
};

// Visits every multi-index of `shape` in row-major order.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  const size_t rank = shape.size();
  if (numel(shape) == 0) return;
  Shape idx(rank, 0);
  for (int64_t flat = 0, n = numel(shape); flat < n; ++flat) {
    f(idx, flat);
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

class Interpreter {
 public:
  Interpreter(const ir::Function& f, const LaunchArgs& args) : f_(f), args_(args) {}

  void run_block(const Shape& coord, std::string& printed) {
    BlockState s{f_, args_, coord, std::vector<TileData>(f_.values.size()), {}};
    block(s, f_.body);
    printed = std::move(s.printed);
  }

 private:
  // Runs the ops of b; returns the yielded values when b ends in a yield.
  std::vector<TileData> block(BlockState& s, const ir::Block& b) {
    for (const ir::Op& op : b.ops) {
      if (op.kind == OpKind::Yield) {
        std::vector<TileData> out;
        for (ValueId v : op.operands) out.push_back(s.values[v]);
        return out;
      }
      this->op(s, op);
    }
    return {};
  }

  const TileData& in(BlockState& s, const ir::Op& op, size_t i) { return s.values[op.operands[i]]; }
  TileData& out(BlockState& s, const ir::Op& op) {
    TileData& r = s.values[op.results[0]];
    const ir::Type& t = f_.type(op.results[0]);
    r.dtype = t.dtype;
    r.shape = t.shape;
    const int64_t n = numel(t.shape);
    try {
      r.v.assign(static_cast<size_t>(n), 0.0L);
    } catch (const std::bad_alloc&) {
      fail_tile_memory(op, t, n);
    } catch (const std::length_error&) {
      fail_tile_memory(op, t, n);
    }
    return r;
  }
  static Value scalar(const TileData& t) { return t.v.at(0); }
  // A tile the host cannot hold: an error naming it, its size and the device, not a bad_alloc.
  [[noreturn]] void fail_tile_memory(const ir::Op& op, const ir::Type& t, int64_t n) const {
    fail_at<OutOfMemoryError>(op.loc, "kernel '", f_.name, "': out of memory: the CPU backend "
                              "holds a ", to_string(t), " tile (", ir::mnemonic(op.kind), ") as ",
                              n, " values of ", sizeof(Value), " bytes, which could not be "
                              "allocated on cpu; use smaller tiles");
  }

  // Elementwise ops: f over the operands' elements, rounded to the result dtype. f is generic:
  // float operands are computed in double (one rounding to f64, as the GPU does; f32 and halves
  // round once more, exactly as before), integer and bool operands in Value, which is exact.
  template <class F>
  void map(BlockState& s, const ir::Op& op, F f) {
    const TileData& x = in(s, op, 0);
    TileData& r = out(s, op);
    const bool fp = is_float(x.dtype);
    for (size_t i = 0; i < r.v.size(); ++i)
      r.v[i] = round_to(r.dtype, fp ? Value(f(static_cast<double>(x.v[i]))) : Value(f(x.v[i])));
  }
  template <class F>
  void zip(BlockState& s, const ir::Op& op, F f) {
    const TileData& x = in(s, op, 0);
    const TileData& y = in(s, op, 1);
    TileData& r = out(s, op);
    const bool fp = is_float(x.dtype);
    for (size_t i = 0; i < r.v.size(); ++i)
      r.v[i] =
          round_to(r.dtype, fp ? Value(f(static_cast<double>(x.v[i]), static_cast<double>(y.v[i])))
                               : Value(f(x.v[i], y.v[i])));
  }
  template <class F>
  void zip3(BlockState& s, const ir::Op& op, F f) {
    const TileData& x = in(s, op, 0);
    const TileData& y = in(s, op, 1);
    const TileData& z = in(s, op, 2);
    TileData& r = out(s, op);
    for (size_t i = 0; i < r.v.size(); ++i) r.v[i] = round_to(r.dtype, f(x.v[i], y.v[i], z.v[i]));
  }
  // A bool result of a test of each float element.
  template <class F>
  void test(BlockState& s, const ir::Op& op, F f) {
    const TileData& x = in(s, op, 0);
    TileData& r = out(s, op);
    for (size_t i = 0; i < r.v.size(); ++i) r.v[i] = f(static_cast<double>(x.v[i])) ? 1 : 0;
  }
  // Integer results computed on the 64-bit pattern, wrapping as the GPU does.
  static int64_t bits(Value x) { return static_cast<int64_t>(x); }
  static Value from_bits(uint64_t u) { return static_cast<Value>(static_cast<int64_t>(u)); }

  void op(BlockState& s, const ir::Op& op) {
    const ir::Attrs& a = op.attrs;
    switch (op.kind) {
      case OpKind::TileIndex:
        out(s, op).v[0] = static_cast<Value>(s.coord.at(a.axis));
        return;
      case OpKind::NumTiles:
        out(s, op).v[0] = static_cast<Value>(args_.grid.at(a.axis));
        return;
      case OpKind::ScalarParam: {
        const ArgValue& arg = args_.args.at(a.param);
        const DType t = f_.params[a.param].dtype;
        out(s, op).v[0] =
            round_to(t, is_float(t) ? Value(arg.scalar) : static_cast<Value>(arg.iscalar));
        return;
      }
      case OpKind::Dim:
        out(s, op).v[0] = static_cast<Value>(args_.args.at(a.param).tensor.shape.at(a.axis));
        return;
      case OpKind::Constant: {
        TileData& r = out(s, op);
        std::fill(r.v.begin(), r.v.end(),
                  is_int(r.dtype) ? round_to(r.dtype, static_cast<Value>(ir::integer_constant(a)))
                                  : constant_to(r.dtype, a.value));
        return;
      }
      case OpKind::Iota: {
        TileData& r = out(s, op);
        for_each_index(r.shape, [&](const Shape& idx, int64_t flat) {
          r.v[flat] = round_to(r.dtype, static_cast<Value>(idx[a.axis]));
        });
        return;
      }
      case OpKind::Neg:
        return map(s, op, [](auto x) { return -x; });
      case OpKind::Exp:
        return map(s, op, [](auto x) { return std::exp(x); });
      case OpKind::Log:
        return map(s, op, [](auto x) { return std::log(x); });
      case OpKind::Sqrt:
        return map(s, op, [](auto x) { return std::sqrt(x); });
      case OpKind::Rsqrt:
        return map(s, op, [](auto x) { return 1 / std::sqrt(x); });
      case OpKind::Tanh:
        return map(s, op, [](auto x) { return std::tanh(x); });
      case OpKind::Sin:
        return map(s, op, [](auto x) { return std::sin(x); });
      case OpKind::Cos:
        return map(s, op, [](auto x) { return std::cos(x); });
      case OpKind::Abs:
        return map(s, op, [](auto x) { return std::fabs(x); });
      case OpKind::Exp2:
        return map(s, op, [](auto x) { return std::exp2(x); });
      case OpKind::Log2:
        return map(s, op, [](auto x) { return std::log2(x); });
      case OpKind::Log1p:
        return map(s, op, [](auto x) { return std::log1p(x); });
      case OpKind::Expm1:
        return map(s, op, [](auto x) { return std::expm1(x); });
      case OpKind::Erf:
        return map(s, op, [](auto x) { return std::erf(x); });
      case OpKind::Sigmoid:
        return map(s, op, [](auto x) { return 1 / (1 + std::exp(-x)); });
      case OpKind::Floor:
        return map(s, op, [](auto x) { return std::floor(x); });
      case OpKind::Ceil:
        return map(s, op, [](auto x) { return std::ceil(x); });
      case OpKind::Round:  // to nearest, ties to even (the default rounding mode)
        return map(s, op, [](auto x) { return std::nearbyint(x); });
      case OpKind::Trunc:
        return map(s, op, [](auto x) { return std::trunc(x); });
      case OpKind::IsNan:
        return test(s, op, [](double x) { return std::isnan(x); });
      case OpKind::IsInf:
        return test(s, op, [](double x) { return std::isinf(x); });
      case OpKind::Not: {
        if (in(s, op, 0).dtype == DType::Bool)
          return map(s, op, [](auto x) { return x != 0 ? 0.0 : 1.0; });
        return map(s, op, [](Value x) { return static_cast<Value>(~bits(x)); });
      }
      case OpKind::Cast: {
        const TileData& x = in(s, op, 0);
        TileData& r = out(s, op);
        for (size_t i = 0; i < r.v.size(); ++i) r.v[i] = convert(x.dtype, r.dtype, x.v[i]);
        return;
      }
      // Integer sums and differences of two values of |x| < 2^63 are exact in a Value; round_to
      // then wraps them.
      case OpKind::Add:
        return zip(s, op, [](auto x, auto y) { return x + y; });
      case OpKind::Sub:
        return zip(s, op, [](auto x, auto y) { return x - y; });
      case OpKind::Mul: {
        if (is_float(in(s, op, 0).dtype)) return zip(s, op, [](auto x, auto y) { return x * y; });
        // Integers wrap: multiply the 64-bit patterns (the low bits of the product are the
        // wrapped result at any width; round_to then wraps narrower types further).
        return zip(s, op, [](Value x, Value y) {
          return from_bits(static_cast<uint64_t>(bits(x)) * static_cast<uint64_t>(bits(y)));
        });
      }
      case OpKind::Div: {
        if (is_float(in(s, op, 0).dtype)) return zip(s, op, [](auto x, auto y) { return x / y; });
        // Integer division truncates; by zero it gives 0 (defined here, unlike C++), and the
        // one quotient that overflows, INT64_MIN / -1, wraps to INT64_MIN.
        return zip(s, op, [](Value x, Value y) {
          const int64_t n = bits(x), d = bits(y);
          if (d == 0) return Value(0);
          if (d == -1) return from_bits(0 - static_cast<uint64_t>(n));
          return static_cast<Value>(n / d);
        });
      }
      case OpKind::Max:
        return zip(s, op, [](auto x, auto y) -> decltype(x) {
          return std::isnan(x) || std::isnan(y) ? NAN : std::max(x, y);
        });
      case OpKind::Min:
        return zip(s, op, [](auto x, auto y) -> decltype(x) {
          return std::isnan(x) || std::isnan(y) ? NAN : std::min(x, y);
        });
      case OpKind::And: {
        const bool boolean = in(s, op, 0).dtype == DType::Bool;
        return zip(s, op, [boolean](Value x, Value y) {
          return boolean ? Value(x != 0 && y != 0) : static_cast<Value>(bits(x) & bits(y));
        });
      }
      case OpKind::Or: {
        const bool boolean = in(s, op, 0).dtype == DType::Bool;
        return zip(s, op, [boolean](Value x, Value y) {
          return boolean ? Value(x != 0 || y != 0) : static_cast<Value>(bits(x) | bits(y));
        });
      }
      case OpKind::Xor: {
        const bool boolean = in(s, op, 0).dtype == DType::Bool;
        return zip(s, op, [boolean](Value x, Value y) {
          return boolean ? Value((x != 0) != (y != 0)) : static_cast<Value>(bits(x) ^ bits(y));
        });
      }
      case OpKind::Pow:
        return zip(s, op, [](auto x, auto y) { return std::pow(x, y); });
      case OpKind::Fmod:
        return zip(s, op, [](auto x, auto y) { return std::fmod(x, y); });
      case OpKind::Copysign:
        return zip(s, op, [](auto x, auto y) { return std::copysign(x, y); });
      case OpKind::Rem:
        // Truncating, as C++; a % 0 = a (so a == (a / b) * b + a % b with a / 0 = 0), and
        // INT64_MIN % -1 = 0 (C++ leaves both undefined).
        return zip(s, op, [](Value x, Value y) {
          const int64_t n = bits(x), d = bits(y);
          if (d == 0) return x;
          if (d == -1) return Value(0);
          return static_cast<Value>(n % d);
        });
      case OpKind::Shl:
      case OpKind::Shr: {
        const int width = static_cast<int>(dtype_size(in(s, op, 0).dtype)) * 8;
        const bool left = op.kind == OpKind::Shl;
        return zip(s, op, [width, left](Value x, Value y) {
          const int64_t a = bits(x), n = bits(y);
          if (n < 0 || n >= width) return left ? Value(0) : Value(a < 0 ? -1 : 0);
          // On the 64-bit pattern: the low `width` bits are the result, which round_to keeps.
          return left ? from_bits(static_cast<uint64_t>(a) << n) : static_cast<Value>(a >> n);
        });
      }
      case OpKind::Fma: {
        const DType t = in(s, op, 0).dtype;
        if (t == DType::F32)
          return zip3(s, op, [](Value a, Value b, Value c) {
            return Value(
                std::fma(static_cast<float>(a), static_cast<float>(b), static_cast<float>(c)));
          });
        if (is_float(t))  // f64, and f16/bf16: fused in f64, then rounded once more to the type
          return zip3(s, op, [](Value a, Value b, Value c) {
            return Value(
                std::fma(static_cast<double>(a), static_cast<double>(b), static_cast<double>(c)));
          });
        return zip3(s, op, [](Value a, Value b, Value c) {  // integers wrap
          return from_bits(static_cast<uint64_t>(bits(a)) * static_cast<uint64_t>(bits(b)) +
                           static_cast<uint64_t>(bits(c)));
        });
      }
      case OpKind::Clamp:
        return zip3(s, op, [](Value x, Value lo, Value hi) {
          if (std::isnan(x) || std::isnan(lo) || std::isnan(hi)) return Value(NAN);
          return std::min(std::max(x, lo), hi);
        });
      case OpKind::CmpEq:
        return zip(s, op, [](auto x, auto y) { return double(x == y); });
      case OpKind::CmpNe:
        return zip(s, op, [](auto x, auto y) { return double(x != y); });
      case OpKind::CmpLt:
        return zip(s, op, [](auto x, auto y) { return double(x < y); });
      case OpKind::CmpLe:
        return zip(s, op, [](auto x, auto y) { return double(x <= y); });
      case OpKind::CmpGt:
        return zip(s, op, [](auto x, auto y) { return double(x > y); });
      case OpKind::CmpGe:
        return zip(s, op, [](auto x, auto y) { return double(x >= y); });
      case OpKind::Select: {
        const TileData& c = in(s, op, 0);
        const TileData& x = in(s, op, 1);
        const TileData& y = in(s, op, 2);
        TileData& r = out(s, op);
        for (size_t i = 0; i < r.v.size(); ++i) r.v[i] = c.v[i] != 0 ? x.v[i] : y.v[i];
        return;
      }
      case OpKind::Broadcast: {
        const TileData& x = in(s, op, 0);
        TileData& r = out(s, op);
        const Shape xs = row_major_strides(x.shape);
        for_each_index(r.shape, [&](const Shape& idx, int64_t flat) {
          int64_t src = 0;
          for (size_t d = 0; d < idx.size(); ++d) src += (x.shape[d] == 1 ? 0 : idx[d]) * xs[d];
          r.v[flat] = x.v[src];
        });
        return;
      }
      case OpKind::Reshape: {
        const TileData& x = in(s, op, 0);
        out(s, op).v = x.v;
        return;
      }
      case OpKind::Permute: {
        const TileData& x = in(s, op, 0);
        TileData& r = out(s, op);
        const Shape xs = row_major_strides(x.shape);
        for_each_index(r.shape, [&](const Shape& idx, int64_t flat) {
          int64_t src = 0;
          for (size_t d = 0; d < idx.size(); ++d) src += idx[d] * xs[a.perm[d]];
          r.v[flat] = x.v[src];
        });
        return;
      }
      case OpKind::Slice: {
        const TileData& x = in(s, op, 0);
        TileData& r = out(s, op);
        const Shape xs = row_major_strides(x.shape);
        for_each_index(r.shape, [&](const Shape& idx, int64_t flat) {
          int64_t src = 0;
          for (size_t d = 0; d < idx.size(); ++d)
            src += (idx[d] + (static_cast<int>(d) == a.axis ? a.start : 0)) * xs[d];
          r.v[flat] = x.v[src];
        });
        return;
      }
      case OpKind::Concat: {
        TileData& r = out(s, op);
        const Shape rs = row_major_strides(r.shape);
        int64_t first = 0;  // where this operand starts along the axis
        for (size_t i = 0; i < op.operands.size(); ++i) {
          const TileData& x = in(s, op, i);
          for_each_index(x.shape, [&](const Shape& idx, int64_t flat) {
            int64_t dst = 0;
            for (size_t d = 0; d < idx.size(); ++d)
              dst += (idx[d] + (static_cast<int>(d) == a.axis ? first : 0)) * rs[d];
            r.v[dst] = x.v[flat];
          });
          first += x.shape[a.axis];
        }
        return;
      }
      case OpKind::ReduceSum:
      case OpKind::ReduceMax:
      case OpKind::ReduceMin:
      case OpKind::ReduceProd:
      case OpKind::ReduceAny:
      case OpKind::ReduceAll: {
        const TileData& x = in(s, op, 0);
        TileData& r = out(s, op);
        const Value init = op.kind == OpKind::ReduceSum || op.kind == OpKind::ReduceAny    ? 0.0L
                           : op.kind == OpKind::ReduceProd || op.kind == OpKind::ReduceAll ? 1.0L
                           : op.kind == OpKind::ReduceMax ? -INFINITY
                                                          : INFINITY;
        std::fill(r.v.begin(), r.v.end(), init);
        const Shape rs = row_major_strides(r.shape);
        const bool integer_sum = op.kind == OpKind::ReduceSum && !is_float(r.dtype);
        const bool integer_prod = op.kind == OpKind::ReduceProd && !is_float(r.dtype);
        for_each_index(x.shape, [&](const Shape& idx, int64_t flat) {
          int64_t dst = 0;
          for (size_t d = 0; d < idx.size(); ++d)
            dst += (static_cast<int>(d) == a.axis ? 0 : idx[d]) * rs[d];
          Value& acc = r.v[dst];
          const Value e = x.v[flat];
          // Integer sums and products wrap at each step, as the GPU's do, and so stay exact.
          if (integer_sum)
            acc = round_to(r.dtype, acc + e);
          else if (integer_prod)
            acc = round_to(r.dtype, from_bits(static_cast<uint64_t>(bits(acc)) *
                                              static_cast<uint64_t>(bits(e))));
          else if (op.kind == OpKind::ReduceSum)
            acc = static_cast<double>(acc) + static_cast<double>(e);
          else if (op.kind == OpKind::ReduceProd)
            acc = static_cast<double>(acc) * static_cast<double>(e);
          else if (op.kind == OpKind::ReduceAny)
            acc = acc != 0 || e != 0 ? 1 : 0;
          else if (op.kind == OpKind::ReduceAll)
            acc = acc != 0 && e != 0 ? 1 : 0;
          else if (std::isnan(e) || std::isnan(acc))
            acc = NAN;
          else
            acc = op.kind == OpKind::ReduceMax ? std::max(acc, e) : std::min(acc, e);
        });
        for (Value& e : r.v) e = round_to(r.dtype, e);
        return;
      }
      case OpKind::ArgMax:
      case OpKind::ArgMin:
        return arg_reduce(s, op);
      case OpKind::CumSum:
      case OpKind::CumProd:
        return scan(s, op);
      case OpKind::Sort:
      case OpKind::ArgSort:
        return sort(s, op);
      case OpKind::Mma: {
        const TileData& x = in(s, op, 0);
        const TileData& y = in(s, op, 1);
        const TileData& c = in(s, op, 2);
        TileData& r = out(s, op);
        const int64_t M = x.shape[0], K = x.shape[1], N = y.shape[1];
        const bool integer = !is_float(r.dtype);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            if (integer) {  // products and sums on the 64-bit patterns: exact, then wrapped
              uint64_t acc = static_cast<uint64_t>(bits(c.v[i * N + j]));
              for (int64_t k = 0; k < K; ++k)
                acc += static_cast<uint64_t>(bits(x.v[i * K + k])) *
                       static_cast<uint64_t>(bits(y.v[k * N + j]));
              r.v[i * N + j] = round_to(r.dtype, from_bits(acc));
              continue;
            }
            double acc = 0;
            if (op.attrs.tf32) {
              for (int64_t k = 0; k < K; ++k)
                acc += static_cast<double>(round_tf32(x.v[i * K + k])) *
                       static_cast<double>(round_tf32(y.v[k * N + j]));
            } else {
              for (int64_t k = 0; k < K; ++k)
                acc += static_cast<double>(x.v[i * K + k]) * static_cast<double>(y.v[k * N + j]);
            }
            r.v[i * N + j] = round_to(r.dtype, static_cast<double>(c.v[i * N + j]) + acc);
          }
        return;
      }
      case OpKind::Load:
        load(s, op);
        return;
      case OpKind::Gather:
        gather(s, op);
        return;
      case OpKind::Store:
        store(s, op);
        return;
      case OpKind::StorePart:
        store_part(s, op);
        return;
      case OpKind::Accumulate:
        accumulate(s, op);
        return;
      case OpKind::For: {
        const int64_t lb = static_cast<int64_t>(scalar(in(s, op, 0)));
        const int64_t ub = static_cast<int64_t>(scalar(in(s, op, 1)));
        const int64_t step = static_cast<int64_t>(scalar(in(s, op, 2)));
        if (step <= 0)
          fail_at<KernelError>(op.loc, "for_range step is ", step, "; it must be positive");
        const ir::Block& body = op.regions[0];
        for (size_t i = 3; i < op.operands.size(); ++i)
          s.values[body.args[i - 2]] = s.values[op.operands[i]];
        for (int64_t iv = lb; iv < ub; iv += step) {
          TileData& ivd = s.values[body.args[0]];
          ivd = TileData{DType::I32, {}, {static_cast<Value>(iv)}};
          std::vector<TileData> next = block(s, body);
          for (size_t i = 0; i < next.size(); ++i) s.values[body.args[i + 1]] = std::move(next[i]);
        }
        for (size_t i = 0; i < op.results.size(); ++i)
          s.values[op.results[i]] = s.values[body.args[i + 1]];
        return;
      }
      case OpKind::If: {
        const bool c = scalar(in(s, op, 0)) != 0;
        std::vector<TileData> res = block(s, op.regions[c ? 0 : 1]);
        for (size_t i = 0; i < op.results.size(); ++i) s.values[op.results[i]] = std::move(res[i]);
        return;
      }
      case OpKind::Prefetch:  // a cache hint: nothing to do where memory is the host's
        return;
      case OpKind::Print: {
        std::string line;
        size_t next = 0;
        const std::string& fmt = a.text;
        for (size_t i = 0; i < fmt.size(); ++i) {
          if (fmt[i] == '{' && i + 1 < fmt.size() && fmt[i + 1] == '}') {
            const TileData& v = in(s, op, next++);
            line += format_element(v.dtype, v.v[0]);
            ++i;
          } else {
            line += fmt[i];
          }
        }
        s.printed += line + "\n";
        return;
      }
      case OpKind::Yield:
      case OpKind::LocalLoad:
      case OpKind::LocalStore:
        break;
    }
    TESSERA_INTERNAL_CHECK(false, "op '", ir::mnemonic(op.kind), "' reached the interpreter");
  }

  // argmax / argmin along the axis: the first index of the best element, a NaN being better
  // than any number (so the first NaN wins).
  void arg_reduce(BlockState& s, const ir::Op& op) {
    const TileData& x = in(s, op, 0);
    TileData& r = out(s, op);
    const size_t axis = static_cast<size_t>(op.attrs.axis);
    const int64_t stride = row_major_strides(x.shape)[axis], extent = x.shape[axis];
    const Shape xs = row_major_strides(x.shape);
    const bool max = op.kind == OpKind::ArgMax;
    for_each_index(r.shape, [&](const Shape& idx, int64_t flat) {
      int64_t base = 0;
      for (size_t d = 0; d < idx.size(); ++d) base += idx[d] * xs[d];  // idx[axis] is 0
      Value best = x.v[base];
      int64_t at = 0;
      for (int64_t j = 1; j < extent && !std::isnan(best); ++j) {
        const Value v = x.v[base + j * stride];
        if (std::isnan(v) || (max ? v > best : v < best)) best = v, at = j;
      }
      r.v[flat] = static_cast<Value>(at);
    });
  }

  // sort / argsort along the axis: a stable sort of each line, NaN the largest value.
  void sort(BlockState& s, const ir::Op& op) {
    const TileData& x = in(s, op, 0);
    TileData& r = out(s, op);
    const size_t axis = static_cast<size_t>(op.attrs.axis);
    const int64_t stride = row_major_strides(x.shape)[axis], extent = x.shape[axis];
    const bool down = op.attrs.descending;
    // a goes before b: the larger (descending) or smaller first, NaN counted as the largest.
    const auto before = [down](Value a, Value b) {
      if (std::isnan(a) || std::isnan(b)) return down ? !std::isnan(b) : !std::isnan(a);
      return down ? a > b : a < b;
    };
    std::vector<int64_t> order(static_cast<size_t>(extent));
    for_each_index(x.shape, [&](const Shape& idx, int64_t flat) {
      if (idx[axis] != 0) return;  // each line once, from its first element
      for (int64_t j = 0; j < extent; ++j) order[static_cast<size_t>(j)] = j;
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
        return before(x.v[flat + i * stride], x.v[flat + j * stride]);
      });
      for (int64_t p = 0; p < extent; ++p) {
        const int64_t from = order[static_cast<size_t>(p)];
        r.v[flat + p * stride] = op.kind == OpKind::ArgSort ? Value(static_cast<double>(from))
                                                            : x.v[flat + from * stride];
      }
    });
  }

  // cumsum / cumprod along the axis: floats accumulate in double and round once per element;
  // integers wrap at each step (exact), as the GPU's do.
  void scan(BlockState& s, const ir::Op& op) {
    const TileData& x = in(s, op, 0);
    TileData& r = out(s, op);
    const size_t axis = static_cast<size_t>(op.attrs.axis);
    const int64_t stride = row_major_strides(x.shape)[axis], extent = x.shape[axis];
    const bool sum = op.kind == OpKind::CumSum, integer = !is_float(r.dtype);
    for_each_index(x.shape, [&](const Shape& idx, int64_t flat) {
      if (idx[axis] != 0) return;  // each line once, from its first element
      Value acc = sum ? 0 : 1;
      for (int64_t j = 0; j < extent; ++j) {
        const int64_t at = flat + j * stride;
        if (op.attrs.exclusive) r.v[at] = round_to(r.dtype, acc);
        const Value e = x.v[at];
        if (integer)
          acc = round_to(r.dtype, sum ? acc + e
                                      : from_bits(static_cast<uint64_t>(bits(acc)) *
                                                  static_cast<uint64_t>(bits(e))));
        else
          acc = sum ? Value(static_cast<double>(acc) + static_cast<double>(e))
                    : Value(static_cast<double>(acc) * static_cast<double>(e));
        if (!op.attrs.exclusive) r.v[at] = round_to(r.dtype, acc);
      }
    });
  }

  // Element offset (in elements) of tile element `idx` of tile `coord` x `shape` (or, `at_element`,
  // of the tile whose first element is `coord`), or nullopt when it lies outside the tensor;
  // `axis_out` tells which axis left it.
  static bool locate(const TensorArg& t, const Shape& coord, const Shape& tile, const Shape& idx,
                     int64_t& offset, int& axis_out, int64_t& global_out, bool at_element = false) {
    offset = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      // Checked: a coordinate far outside the grid must not wrap back into the tensor.
      const std::optional<int64_t> start =
          at_element ? std::optional<int64_t>(coord[d]) : checked_mul(coord[d], tile[d]);
      const std::optional<int64_t> at = start ? checked_add(*start, idx[d]) : std::nullopt;
      const int64_t g = at.value_or(std::numeric_limits<int64_t>::max());
      if (!at || g < 0 || g >= t.shape[d]) {
        axis_out = static_cast<int>(d);
        global_out = g;
        return false;
      }
      offset += g * t.strides[d];
    }
    return true;
  }

  void load(BlockState& s, const ir::Op& op) {
    const ir::Attrs& a = op.attrs;
    const TensorArg& t = args_.args.at(a.param).tensor;
    Shape coord;
    for (size_t i = 0; i < op.operands.size(); ++i)
      coord.push_back(static_cast<int64_t>(scalar(in(s, op, i))));
    TileData& r = out(s, op);
    // The pad converts as a cast does, so Pad::neg_inf() of an integer tile is its lowest value
    // (rounding -inf would wrap it to 0).
    const Value pad = convert(DType::F64, r.dtype, a.value);
    for_each_index(r.shape, [&](const Shape& idx, int64_t flat) {
      int64_t offset = 0, global = 0;
      int axis = 0;
      if (locate(t, coord, a.shape, idx, offset, axis, global, a.at_element)) {
        r.v[flat] = read_element(t.data, t.dtype, offset);
      } else if (a.padded) {
        r.v[flat] = pad;
      } else {
        fail_at<BoundsError>(op.loc, "unpadded load from '", f_.params[a.param].name,
                             a.at_element ? "' at element " : "' at tile ", to_string(coord),
                             " of shape ", to_string(a.shape), " reaches element ", global,
                             " along axis ", axis, ", outside the tensor's extent ", t.shape[axis],
                             "; load with padding (the default) to read past the edge");
      }
    });
  }

  // Rows chosen by the index tile (operand 0), the other axes from the start elements. A row
  // index outside the tensor is an error even when padded: it is a wrong index, not an edge.
  void gather(BlockState& s, const ir::Op& op) {
    const ir::Attrs& a = op.attrs;
    const TensorArg& t = args_.args.at(a.param).tensor;
    const TileData& rows = in(s, op, 0);
    Shape start{0};
    for (size_t i = 1; i < op.operands.size(); ++i)
      start.push_back(static_cast<int64_t>(scalar(in(s, op, i))));
    for (size_t i = 0; i < rows.v.size(); ++i) {
      const auto row = static_cast<int64_t>(rows.v[i]);
      if (row < 0 || row >= t.shape[0])
        fail_at<BoundsError>(op.loc, "gather from '", f_.params[a.param].name, "': row index ", row,
                             " (element ", i, " of the index tile) is outside the tensor's extent ",
                             t.shape[0], " along axis 0; clamp the indices to [0, ", t.shape[0],
                             ") or select a valid row first");
    }
    TileData& r = out(s, op);
    const Value pad = convert(DType::F64, r.dtype, a.value);
    for_each_index(r.shape, [&](const Shape& idx, int64_t flat) {
      Shape first = start, at = idx;
      first[0] = static_cast<int64_t>(rows.v[static_cast<size_t>(idx[0])]);
      at[0] = 0;
      int64_t offset = 0, global = 0;
      int axis = 0;
      if (locate(t, first, a.shape, at, offset, axis, global, /*at_element=*/true)) {
        r.v[flat] = read_element(t.data, t.dtype, offset);
      } else if (a.padded) {
        r.v[flat] = pad;
      } else {
        fail_at<BoundsError>(op.loc, "unpadded gather from '", f_.params[a.param].name, "' at row ",
                             first[0], " reaches element ", global, " along axis ", axis,
                             ", outside the tensor's extent ", t.shape[axis],
                             "; gather with padding (the default) to read past the edge");
      }
    });
  }

  void store(BlockState& s, const ir::Op& op) {
    const ir::Param& p = f_.params.at(op.attrs.param);
    const TensorArg& t = args_.args.at(op.attrs.param).tensor;
    const TileData& x = in(s, op, 0);
    for_each_index(x.shape, [&](const Shape& idx, int64_t flat) {
      int64_t offset = 0, global = 0;
      int axis = 0;
      if (locate(t, s.coord, p.tile_shape, idx, offset, axis, global))
        write_element(t.data, t.dtype, offset, x.v[flat]);
    });
  }

  // A piece of this block's tile at `offsets` within it: elements outside the tile are dropped
  // (a block writes only its own tile), as are those outside the tensor.
  void store_part(BlockState& s, const ir::Op& op) {
    const ir::Param& p = f_.params.at(op.attrs.param);
    const TensorArg& t = args_.args.at(op.attrs.param).tensor;
    const TileData& x = in(s, op, 0);
    Shape at(p.tile_shape.size());
    for (size_t d = 0; d < at.size(); ++d) at[d] = static_cast<int64_t>(scalar(in(s, op, d + 1)));
    for_each_index(x.shape, [&](const Shape& idx, int64_t flat) {
      Shape local(idx.size());
      for (size_t d = 0; d < idx.size(); ++d) {
        local[d] = at[d] + idx[d];  // |offset| < 2^31 and idx < 2^31: no overflow
        if (local[d] < 0 || local[d] >= p.tile_shape[d]) return;
      }
      int64_t offset = 0, global = 0;
      int axis = 0;
      if (locate(t, s.coord, p.tile_shape, local, offset, axis, global))
        write_element(t.data, t.dtype, offset, x.v[flat]);
    });
  }

  // Adds the tile into an Accum at element `start`, element by element in row-major order;
  // elements outside the tensor are dropped. The blocks of a launch with an Accum run one after
  // another (run()), so the order of all adds is fixed. f32 and f64 add as the GPU's atomics do
  // (one rounding per add), integers wrap.
  void accumulate(BlockState& s, const ir::Op& op) {
    const TensorArg& t = args_.args.at(op.attrs.param).tensor;
    const TileData& x = in(s, op, 0);
    Shape start(x.shape.size());
    for (size_t d = 0; d < start.size(); ++d)
      start[d] = static_cast<int64_t>(scalar(in(s, op, d + 1)));
    for_each_index(x.shape, [&](const Shape& idx, int64_t flat) {
      int64_t offset = 0, global = 0;
      int axis = 0;
      if (!locate(t, start, x.shape, idx, offset, axis, global, /*at_element=*/true)) return;
      const Value old = read_element(t.data, t.dtype, offset);
      const Value add = x.v[flat];
      Value sum;
      if (is_float(t.dtype))
        sum = t.dtype == DType::F64
                  ? Value(static_cast<double>(old) + static_cast<double>(add))
                  : Value(static_cast<float>(static_cast<float>(old) + static_cast<float>(add)));
      else
        sum = round_to(t.dtype, from_bits(static_cast<uint64_t>(bits(old)) +
                                          static_cast<uint64_t>(bits(add))));
      write_element(t.data, t.dtype, offset, sum);
    });
  }

  const ir::Function& f_;
  const LaunchArgs& args_;
};

// Whether the kernel adds into an Accum: its blocks then run in order (docs/dsl.md, Accum).
bool accumulates(const ir::Function& f) {
  for (const ir::Param& p : f.params)
    if (p.kind == ir::ParamKind::Accum) return true;
  return false;
}

}  // namespace

void run(const ir::Function& f, const LaunchArgs& args) {
  TESSERA_INTERNAL_CHECK(f.stage == ir::Stage::Promoted);
  const int64_t blocks = numel(args.grid);
  if (blocks == 0) return;
  Interpreter interp(f, args);
  const Shape grid_strides = row_major_strides(args.grid);

  std::atomic<int64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto worker = [&] {
    std::string printed;
    for (int64_t b; !failed && (b = next++) < blocks;) {
      Shape coord(args.grid.size());
      for (size_t d = 0; d < coord.size(); ++d) coord[d] = (b / grid_strides[d]) % args.grid[d];
      try {
        interp.run_block(coord, printed);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failed.exchange(true)) error = std::current_exception();
        return;
      }
      if (!printed.empty()) {
        std::lock_guard lock(mu);
        std::cout << printed << std::flush;
      }
    }
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  // A kernel with an Accum runs its blocks one after another, in row-major grid order: the
  // documented order of its adds, which makes the sums deterministic.
  const int64_t n = accumulates(f) ? 1 : std::min<int64_t>(hw, blocks);
  std::vector<std::thread> pool;
  for (int64_t i = 1; i < n; ++i) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace tessera::backend::cpu

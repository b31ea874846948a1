// Creation and elementwise ops. Each is one unrolled loop over the result's registers (the
// operands share its layout, or are uniform and read as they are); uniform results are one
// scalar statement. Results are rounded to their dtype as the CPU backend rounds them.
#include "codegen_emitter.hpp"

namespace tessera::backend::cuda::detail {
namespace {

using ir::OpKind;

bool is_f64(DType t) {
  return t == DType::F64;
}
bool is_float32_math(DType t) {  // computed in f32 registers (f16 and bf16 are widened)
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

// f(x) in f32 (rounded to rt: f16/bf16, or f32 when the store rounds) or f64.
std::string math(DType t, DType rt, const char* f32, const char* f64, const std::string& x) {
  if (is_f64(t)) return std::string(f64) + "(" + x + ")";
  return round_to(rt, std::string(f32) + "(" + x + ")");
}

// Under Numerics::fast, f32 math may take the GPU's approximate instructions (the CUDA intrinsics
// below; their error bounds are in docs/dsl.md, "Numerics"). f64 and integer math never change.
std::string fast_unary(OpKind k, DType t, DType rt, const std::string& x) {
  if (!is_float32_math(t)) return {};
  if (k == OpKind::Exp) return round_to(rt, "tsr_exp_fast(" + x + ")");  // ex2.approx.ftz
  if (k == OpKind::Log) return round_to(rt, "__logf(" + x + ")");  // lg2.approx(x) * ln 2
  if (k == OpKind::Rsqrt) return round_to(rt, "rsqrtf(" + x + ")");
  if (k == OpKind::Sin) return round_to(rt, "__sinf(" + x + ")");
  if (k == OpKind::Cos) return round_to(rt, "__cosf(" + x + ")");
  return {};
}

// t: the operands' dtype; rt: the dtype the result is rounded to here (see rounded_by_store).
std::string unary_expr(OpKind k, DType t, DType rt, ir::Numerics numerics, const std::string& x) {
  if (numerics == ir::Numerics::fast)
    if (std::string e = fast_unary(k, t, rt, x); !e.empty()) return e;
  if (k == OpKind::Neg) return "tsr_neg(" + x + ")";
  if (k == OpKind::Abs) return "tsr_abs(" + x + ")";
  if (k == OpKind::Not) return "!" + x;
  if (k == OpKind::Exp) return math(t, rt, "expf", "exp", x);
  if (k == OpKind::Log) return math(t, rt, "logf", "log", x);
  if (k == OpKind::Sqrt) return math(t, rt, "sqrtf", "sqrt", x);
  if (k == OpKind::Rsqrt)
    return is_f64(t) ? "1.0 / sqrt(" + x + ")" : round_to(rt, "1.0f / sqrtf(" + x + ")");
  if (k == OpKind::Tanh) return math(t, rt, "tanhf", "tanh", x);
  if (k == OpKind::Sin) return math(t, rt, "sinf", "sin", x);
  TESSERA_INTERNAL_CHECK(k == OpKind::Cos, "not a unary op");
  return math(t, rt, "cosf", "cos", x);
}

std::string binary_expr(OpKind k, DType t, DType rt, ir::Numerics numerics, const std::string& a,
                        const std::string& b) {
  const std::string args = "(" + a + ", " + b + ")";
  const bool fast = numerics == ir::Numerics::fast && is_float32_math(t);
  if (k == OpKind::Add) return round_to(rt, "tsr_add" + args);
  if (k == OpKind::Sub) return round_to(rt, "tsr_sub" + args);
  if (k == OpKind::Mul) return round_to(rt, "tsr_mul" + args);
  // a * rcp.approx(b): a row's `e / sum` then takes one reciprocal a row (the compiler shares it).
  if (k == OpKind::Div) return round_to(rt, (fast ? "__fdividef" : "tsr_div") + args);
  // One of the operands, already rounded; NaN propagates either way.
  if (k == OpKind::Max) return (fast ? "tsr_max_fast" : "tsr_max") + args;
  if (k == OpKind::Min) return (fast ? "tsr_min_fast" : "tsr_min") + args;
  if (k == OpKind::And) return "(" + a + (t == DType::Bool ? " && " : " & ") + b + ")";
  if (k == OpKind::Or) return "(" + a + (t == DType::Bool ? " || " : " | ") + b + ")";
  const char* cmp = k == OpKind::CmpEq   ? " == "
                    : k == OpKind::CmpNe ? " != "
                    : k == OpKind::CmpLt ? " < "
                    : k == OpKind::CmpLe ? " <= "
                    : k == OpKind::CmpGt ? " > "
                    : k == OpKind::CmpGe ? " >= "
                                         : nullptr;
  TESSERA_INTERNAL_CHECK(cmp != nullptr, "not a binary op");
  return "(" + a + cmp + b + ")";
}

}  // namespace

void Emitter::map(const ir::Op& op, const Expr& expr) {
  std::vector<Operand> xs;
  for (size_t i = 0; i < op.operands.size(); ++i) xs.push_back(operand(op, i));
  const ir::ValueId r = op.results[0];
  std::vector<std::string> el;
  if (layout(r).kind == LayoutKind::Uniform) {
    for (const Operand& x : xs) el.push_back(x.var);
    declare(r, expr(el), true);
    return;
  }
  for (const Operand& x : xs) el.push_back(at(x.var, x.layout, "i"));
  declare(r);
  unroll();
  line(register_loop(r), " ", name(r), "[i] = ", expr(el), ";");
}

void Emitter::constant(const ir::Op& op) {
  declare(op.results[0],
          is_int(op.attrs.dtype) ? integer_literal(op.attrs.dtype, ir::integer_constant(op.attrs))
                                 : literal(op.attrs.dtype, op.attrs.value),
          true);
}

// Each element holds its index along `axis`, converted to the dtype.
void Emitter::iota(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  const Shape& shape = type(r).shape;
  const Shape strides = row_major_strides(shape);
  const int axis = op.attrs.axis;
  declare(r);
  for_registers(layout(r), shape, [&](const Reg& g) {
    std::string idx = "(" + g.flat + ")";
    if (strides[axis] != 1) idx += " / " + str(strides[axis]);
    if (axis != 0) idx = "(" + idx + ") % " + str(shape[axis]);
    line(name(r), "[", g.reg, "] = ", cast(DType::I32, type(r).dtype, "(" + idx + ")"), ";");
  });
}

void Emitter::unary(const ir::Op& op) {
  const DType t = type(op.operands[0]).dtype, rt = rounding(op.results[0]);
  map(op, [&](const std::vector<std::string>& x) {
    return unary_expr(op.kind, t, rt, fn().numerics, x[0]);
  });
}

void Emitter::binary(const ir::Op& op) {
  const DType t = type(op.operands[0]).dtype, rt = rounding(op.results[0]);
  map(op, [&](const std::vector<std::string>& x) {
    return binary_expr(op.kind, t, rt, fn().numerics, x[0], x[1]);
  });
}

void Emitter::select(const ir::Op& op) {
  map(op, [](const std::vector<std::string>& x) {
    return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")";
  });
}

void Emitter::cast_op(const ir::Op& op) {
  const DType from = type(op.operands[0]).dtype, to = op.attrs.dtype;
  const bool round = rounding(op.results[0]) == to;
  map(op, [&](const std::vector<std::string>& x) { return cast(from, to, x[0], round); });
}

}  // namespace tessera::backend::cuda::detail

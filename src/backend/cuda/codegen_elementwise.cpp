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
  if (k == OpKind::Log) return round_to(rt, "__logf(" + x + ")");        // lg2.approx(x) * ln 2
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
  if (k == OpKind::Not) return t == DType::Bool ? "!" + x : "~" + x;  // integers: wraps
  if (k == OpKind::IsNan) return "(" + x + " != " + x + ")";
  if (k == OpKind::IsInf) return "tsr_isinf(" + x + ")";
  if (k == OpKind::Exp2) return math(t, rt, "exp2f", "exp2", x);
  if (k == OpKind::Log2) return math(t, rt, "log2f", "log2", x);
  if (k == OpKind::Log1p) return math(t, rt, "log1pf", "log1p", x);
  if (k == OpKind::Expm1) return math(t, rt, "expm1f", "expm1", x);
  if (k == OpKind::Erf) return math(t, rt, "erff", "erf", x);
  if (k == OpKind::Sigmoid) return math(t, rt, "tsr_sigmoid", "tsr_sigmoid", x);
  if (k == OpKind::Floor) return math(t, rt, "floorf", "floor", x);
  if (k == OpKind::Ceil) return math(t, rt, "ceilf", "ceil", x);
  if (k == OpKind::Round) return math(t, rt, "rintf", "rint", x);  // ties to even
  if (k == OpKind::Trunc) return math(t, rt, "truncf", "trunc", x);
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
  if (k == OpKind::Xor) return "(" + a + (t == DType::Bool ? " != " : " ^ ") + b + ")";
  if (k == OpKind::Rem) return "tsr_rem" + args;
  if (k == OpKind::Shl) return "tsr_shl" + args;
  if (k == OpKind::Shr) return "tsr_shr" + args;
  // Exact in f32 (fmod, copysign) or within powf's 2 ulps; f16/bf16 then round once more.
  const bool f64 = is_f64(t);
  if (k == OpKind::Pow) return f64 ? "pow" + args : round_to(rt, "powf" + args);
  if (k == OpKind::Fmod) return f64 ? "fmod" + args : round_to(rt, "fmodf" + args);
  if (k == OpKind::Copysign) return f64 ? "copysign" + args : round_to(rt, "copysignf" + args);
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

std::string Emitter::element_expr(const ir::Op& op, const std::vector<std::string>& x) const {
  const DType t = type(op.operands[0]).dtype, rt = rounding(op.results[0]);
  switch (ir::op_info(op.kind).cls) {
    case ir::OpClass::Unary:
    case ir::OpClass::UnaryFloat:
    case ir::OpClass::UnaryBool:
    case ir::OpClass::Classify:
      return unary_expr(op.kind, t, rt, fn().numerics, x[0]);
    case ir::OpClass::Binary:
    case ir::OpClass::BinaryBool:
    case ir::OpClass::BinaryFloat:
    case ir::OpClass::BinaryInt:
    case ir::OpClass::Compare:
      return binary_expr(op.kind, t, rt, fn().numerics, x[0], x[1]);
    case ir::OpClass::Select:
      return "(" + x[0] + " ? " + x[1] + " : " + x[2] + ")";
    case ir::OpClass::Ternary: {
      // fma: one rounding of a * b + c (f16/bf16: tsr_fma16, see there); integers wrap.
      // clamp: the NaN-propagating max and min, in the register type.
      const DType r = type(op.results[0]).dtype;
      const std::string args = "(" + x[0] + ", " + x[1] + ", " + x[2] + ")";
      if (op.kind == OpKind::Clamp) return "tsr_clamp<" + reg_type(r) + ">" + args;
      TESSERA_INTERNAL_CHECK(op.kind == OpKind::Fma, "not a ternary op");
      if (is_int(r)) return "tsr_add(tsr_mul(" + x[0] + ", " + x[1] + "), " + x[2] + ")";
      if (r == DType::F32) return "fmaf" + args;
      if (r == DType::F64) return "fma" + args;
      return round_to(r, "tsr_fma16" + args);
    }
    case ir::OpClass::Cast:
      return cast(t, op.attrs.dtype, x[0], rt == op.attrs.dtype);
    case ir::OpClass::Interface:
    case ir::OpClass::Creation:
    case ir::OpClass::Broadcast:
    case ir::OpClass::Reshape:
    case ir::OpClass::Permute:
    case ir::OpClass::Slice:
    case ir::OpClass::Reduce:
    case ir::OpClass::ArgReduce:
    case ir::OpClass::Scan:
    case ir::OpClass::Mma:
    case ir::OpClass::Load:
    case ir::OpClass::Gather:
    case ir::OpClass::Store:
    case ir::OpClass::Prefetch:
    case ir::OpClass::For:
    case ir::OpClass::If:
    case ir::OpClass::Yield:
    case ir::OpClass::Print:
    case ir::OpClass::Local:
      break;
  }
  fail<InternalError>("internal error (a bug in Tessera): '", ir::mnemonic(op.kind),
                      "' is not an elementwise op");
}

std::string Emitter::combine_expr(OpKind k, DType t, const std::string& a,
                                  const std::string& b) const {
  return binary_expr(k, t, t, fn().numerics, a, b);
}

void Emitter::unary(const ir::Op& op) {
  map(op, [&](const std::vector<std::string>& x) { return element_expr(op, x); });
}

void Emitter::binary(const ir::Op& op) {
  map(op, [&](const std::vector<std::string>& x) { return element_expr(op, x); });
}

void Emitter::select(const ir::Op& op) {
  map(op, [&](const std::vector<std::string>& x) { return element_expr(op, x); });
}

void Emitter::ternary(const ir::Op& op) {
  map(op, [&](const std::vector<std::string>& x) { return element_expr(op, x); });
}

void Emitter::cast_op(const ir::Op& op) {
  map(op, [&](const std::vector<std::string>& x) { return element_expr(op, x); });
}

}  // namespace tessera::backend::cuda::detail

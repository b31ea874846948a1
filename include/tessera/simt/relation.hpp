// Size relations: the part of a launch contract that depends on the arguments, checked at every
// launch before anything runs.
//
//   size<"out"> >= size<"x">            1-D spans: size()
//   rows<"c"> == rows<"a">              2-D spans: rows(), cols()
//   size<"out"> >= value<"n">           an integer scalar argument
//   threads<0> >= size<"out">           threads launched along x (grid.x * block.x)
//   rows<"a"> * cols<"a"> <= 1 << 30    products and sums of the above and constants
//
// Parameters are named as in the kernel's parameter list; a name the kernel does not have, or a
// fact its type does not have (rows of a 1-D span), is a compile error. Arithmetic is on 64-bit
// signed integers and checked: a product or sum that overflows makes the launch fail, naming the
// operation and its operands, instead of wrapping into a relation that holds by accident.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tessera/simt/signature.hpp"

namespace tessera::simt {

// A string as a template argument: size<"out">.
template <unsigned N>
struct FixedString {
  char chars[N] = {};
  constexpr FixedString(const char (&s)[N]) {  // NOLINT: implicit, to read as a literal
    for (unsigned i = 0; i < N; ++i) chars[i] = s[i];
  }
  constexpr std::string_view view() const { return {chars, N - 1}; }
};

namespace detail {

// What relations may ask about one argument, filled by the launcher for every parameter (the
// witness's entry is unused).
struct ArgFacts {
  index_t size = 0, rows = 0, cols = 0, value = 0;
  // An unsigned scalar past index_t's range (core/narrowing.hpp): `value` does not hold it, so a
  // relation that reads it cannot be checked.
  bool value_fits = true;
  unsigned long long unsigned_value = 0;
};

// The first overflow met while evaluating a relation: an operation, or a scalar (`unfit`) whose
// value index_t cannot hold.
struct Overflow {
  bool happened = false;
  std::string expression;  // "rows of the product", rendered; or the scalar's name
  index_t a = 0, b = 0;
  char op = '*';
  bool unfit = false;
  unsigned long long unfit_value = 0;
};

struct RelationContext {
  const ArgFacts* args = nullptr;  // one per body parameter, in order
  index_t threads[3] = {1, 1, 1};  // launched threads along x, y, z
  Overflow overflow;
};

// Parameter lists as written ("Index1D i, DisjointSpan<float> out, int64_t n"): a parameter's
// name is the last identifier of its declaration, and commas inside <>, (), [] and {} do not
// separate parameters. The name of parameter `index` (0 = first), or "" past the end.
constexpr std::string_view param_name(std::string_view params, int index) {
  auto is_ident = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
  };
  int position = 0, depth = 0;
  size_t begin = 0;
  for (size_t i = 0; i <= params.size(); ++i) {
    const char ch = i < params.size() ? params[i] : ',';
    if (ch == '<' || ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == '>' || ch == ')' || ch == ']' || ch == '}') --depth;
    if (ch != ',' || depth != 0) continue;
    if (position++ == index) {
      size_t end = i;
      while (end > begin && !is_ident(params[end - 1])) --end;
      size_t start = end;
      while (start > begin && is_ident(params[start - 1])) --start;
      return params.substr(start, end - start);
    }
    begin = i + 1;
  }
  return {};
}

// The position of the parameter called `name`, or -1.
constexpr int param_position(std::string_view params, std::string_view name) {
  for (int i = 0;; ++i) {
    const std::string_view n = param_name(params, i);
    if (n.empty()) return -1;
    if (n == name) return i;
  }
}

enum class Fact { Size, Rows, Cols, Value };

// Checked 64-bit arithmetic; false on overflow.
inline bool checked_mul(index_t a, index_t b, index_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}
inline bool checked_add(index_t a, index_t b, index_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

template <class E>
inline constexpr bool is_size_expr = requires {
  E::kIsSizeExpr;
};

// A fact of one argument.
template <Fact F, FixedString N>
struct ArgExpr {
  static constexpr bool kIsSizeExpr = true;
  static constexpr int kPrecedence = 3;

  template <class K>
  static constexpr int position() {
    constexpr int pos = param_position(K::kParams, N.view());
    static_assert(pos >= 0,
                  "a size relation of this kernel's contract names a parameter the kernel does "
                  "not have (see the name in the template arguments below)");
    return pos;
  }
  template <class K>
  index_t eval(RelationContext& c) const {
    constexpr int pos = position<K>();
    using P = remove_cvref<TypeAt<pos, typename KernelSignature<K>::Body>>;
    if constexpr (F == Fact::Size) {
      static_assert(span_rank<P> == 1,
                    "size<\"name\"> applies to a 1-D span parameter (Span<const T>, "
                    "DisjointSpan<T>); use rows<> and cols<> for a 2-D span");
      return c.args[pos].size;
    } else if constexpr (F == Fact::Rows || F == Fact::Cols) {
      static_assert(span_rank<P> == 2,
                    "rows<\"name\"> and cols<\"name\"> apply to a 2-D span parameter "
                    "(Span2D<const T>, DisjointSpan2D<T>)");
      return F == Fact::Rows ? c.args[pos].rows : c.args[pos].cols;
    } else {
      static_assert(is_integer_scalar<P>, "value<\"name\"> applies to an integer scalar parameter");
      const ArgFacts& a = c.args[pos];
      if (!a.value_fits && !c.overflow.happened) {
        c.overflow.happened = true;
        c.overflow.unfit = true;
        c.overflow.unfit_value = a.unsigned_value;
        c.overflow.expression.clear();
        render(c.overflow.expression);
      }
      return a.value;
    }
  }
  void render(std::string& out) const {
    out += N.view();
    if (F == Fact::Size) out += ".size()";
    if (F == Fact::Rows) out += ".rows()";
    if (F == Fact::Cols) out += ".cols()";
  }
};

// Threads launched along an axis (0 = x): grid extent times block extent.
template <int Axis>
struct ThreadsExpr {
  static_assert(Axis >= 0 && Axis < 3, "threads<axis>: the axis is 0 (x), 1 (y) or 2 (z)");
  static constexpr bool kIsSizeExpr = true;
  static constexpr int kPrecedence = 3;
  template <class K>
  index_t eval(RelationContext& c) const {
    return c.threads[Axis];
  }
  void render(std::string& out) const {
    out += "threads<";
    out += static_cast<char>('0' + Axis);
    out += ">";
  }
};

struct ConstExpr {
  static constexpr bool kIsSizeExpr = true;
  static constexpr int kPrecedence = 3;
  index_t v;
  template <class K>
  index_t eval(RelationContext&) const {
    return v;
  }
  void render(std::string& out) const { out += std::to_string(v); }
};

template <char Op, class L, class R>
struct BinExpr {
  static constexpr bool kIsSizeExpr = true;
  static constexpr int kPrecedence = Op == '*' ? 2 : 1;
  L l;
  R r;
  template <class K>
  index_t eval(RelationContext& c) const {
    const index_t a = l.template eval<K>(c);
    const index_t b = r.template eval<K>(c);
    if (c.overflow.happened) return 0;
    index_t v = 0;
    if (Op == '*' ? checked_mul(a, b, &v) : checked_add(a, b, &v)) return v;
    c.overflow.happened = true;
    c.overflow.expression.clear();
    render(c.overflow.expression);
    c.overflow.a = a;
    c.overflow.b = b;
    c.overflow.op = Op;
    return 0;
  }
  void render(std::string& out) const {
    render_operand(l, out);
    out += Op == '*' ? " * " : " + ";
    render_operand(r, out);
  }

 private:
  template <class E>
  void render_operand(const E& e, std::string& out) const {
    const bool paren = E::kPrecedence < kPrecedence;
    if (paren) out += "(";
    e.render(out);
    if (paren) out += ")";
  }
};

template <class E>
constexpr auto as_expr(E e) {
  if constexpr (is_size_expr<E>)
    return e;
  else
    return ConstExpr{static_cast<index_t>(e)};
}

template <class T>
concept SizeOperand = is_size_expr<T> ||(is_integer_scalar<T> && !is_same<T, char>);

enum class Cmp { Eq, Ne, Lt, Le, Gt, Ge };
const char* cmp_text(Cmp c);

struct RelationOutcome {
  bool holds = true;
  index_t lhs = 0, rhs = 0;
};

template <Cmp C, class L, class R>
struct Relation {
  static constexpr bool kIsRelation = true;
  L l;
  R r;
  template <class K>
  RelationOutcome evaluate(RelationContext& c) const {
    RelationOutcome o;
    o.lhs = l.template eval<K>(c);
    o.rhs = r.template eval<K>(c);
    if (c.overflow.happened) {
      o.holds = false;
      return o;
    }
    switch (C) {
      case Cmp::Eq:
        o.holds = o.lhs == o.rhs;
        break;
      case Cmp::Ne:
        o.holds = o.lhs != o.rhs;
        break;
      case Cmp::Lt:
        o.holds = o.lhs < o.rhs;
        break;
      case Cmp::Le:
        o.holds = o.lhs <= o.rhs;
        break;
      case Cmp::Gt:
        o.holds = o.lhs > o.rhs;
        break;
      case Cmp::Ge:
        o.holds = o.lhs >= o.rhs;
        break;
    }
    return o;
  }
  // "x.size() == out.size()", and each side on its own (empty for a constant).
  void render(std::string& text, std::string& lhs, std::string& rhs) const {
    l.render(lhs);
    r.render(rhs);
    text = lhs + " " + cmp_text(C) + " " + rhs;
    if constexpr (is_same<L, ConstExpr>) lhs.clear();
    if constexpr (is_same<R, ConstExpr>) rhs.clear();
  }
};

template <class T>
inline constexpr bool is_relation = requires {
  T::kIsRelation;
};

// Operators on size expressions (at least one side an expression, the other maybe an integer).
template <SizeOperand L, SizeOperand R>
requires(is_size_expr<L> || is_size_expr<R>) constexpr auto operator*(L l, R r) {
  return BinExpr<'*', decltype(as_expr(l)), decltype(as_expr(r))>{as_expr(l), as_expr(r)};
}
template <SizeOperand L, SizeOperand R>
requires(is_size_expr<L> || is_size_expr<R>) constexpr auto operator+(L l, R r) {
  return BinExpr<'+', decltype(as_expr(l)), decltype(as_expr(r))>{as_expr(l), as_expr(r)};
}

#define TESSERA_SIMT_RELATION_OP(op, cmp)                                                          \
  template <SizeOperand L, SizeOperand R>                                                          \
  requires(is_size_expr<L> || is_size_expr<R>) constexpr auto operator op(L l, R r) {              \
    return Relation<Cmp::cmp, decltype(as_expr(l)), decltype(as_expr(r))>{as_expr(l), as_expr(r)}; \
  }
TESSERA_SIMT_RELATION_OP(==, Eq)
TESSERA_SIMT_RELATION_OP(!=, Ne)
TESSERA_SIMT_RELATION_OP(<, Lt)
TESSERA_SIMT_RELATION_OP(<=, Le)
TESSERA_SIMT_RELATION_OP(>, Gt)
TESSERA_SIMT_RELATION_OP(>=, Ge)
#undef TESSERA_SIMT_RELATION_OP

}  // namespace detail
}  // namespace tessera::simt

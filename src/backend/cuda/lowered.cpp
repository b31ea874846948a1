#include "tessera/backend/cuda/lowered.hpp"

#include <sstream>

#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

namespace {

class Lowerer {
 public:
  Lowerer(const ir::Function& f, const LayoutPlan& plan, LoweredFunction& lf)
      : plan_(plan), lf_(lf) {
    lf_.fn = &f;
    lf_.values.reserve(f.values.size());
    for (size_t v = 0; v < f.values.size(); ++v)
      lf_.values.push_back({static_cast<ir::ValueId>(v), plan.of.at(v)});
  }

  void block(const ir::Block& b, LoweredBlock& out) {
    scopes_.emplace_back();
    for (const ir::Op& op : b.ops) {
      LoweredOp l;
      l.op = &op;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const ir::ValueId v = op.operands[i];
        const auto want = plan_.convert.find({&op, i});
        if (want == plan_.convert.end()) {
          l.operands.push_back(v);
          l.reads_as.push_back(plan_.of.at(v));
          continue;
        }
        const Layout& to = want->second;
        size_t c = visible(v, to);
        if (c == 0) {  // none yet: converted here, before its first reader in this block
          c = lf_.values.size();
          lf_.values.push_back({v, to});
          LoweredOp convert;
          convert.source = v;
          convert.result = c;
          out.ops.push_back(std::move(convert));
          scopes_.back()[{v, to_string(to)}] = c;
        }
        lf_.converted[{&op, i}] = c;
        l.operands.push_back(c);
        l.reads_as.push_back(to);
      }
      l.regions.resize(op.regions.size());
      for (size_t r = 0; r < op.regions.size(); ++r) block(op.regions[r], l.regions[r]);
      out.ops.push_back(std::move(l));
    }
    scopes_.pop_back();
  }

 private:
  // The conversion of v to `to` made in this block or an enclosing one; 0 for none (a
  // conversion's result never has index 0: the IR's values come first).
  size_t visible(ir::ValueId v, const Layout& to) const {
    const std::pair<ir::ValueId, std::string> key{v, to_string(to)};
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->find(key); it != s->end()) return it->second;
    return 0;
  }

  const LayoutPlan& plan_;
  LoweredFunction& lf_;
  std::vector<std::map<std::pair<ir::ValueId, std::string>, size_t>> scopes_;
};

class Verifier {
 public:
  explicit Verifier(const LoweredFunction& lf)
      : lf_(lf), n_ir_(lf.fn->values.size()), defined_(lf.values.size(), false) {
    for (size_t v = 0; v < n_ir_ && v < defined_.size(); ++v) defined_[v] = true;
  }

  void block(const LoweredBlock& b) {
    std::vector<size_t> made_here;
    for (const LoweredOp& l : b.ops) {
      if (!l.op) {
        convert(l);
        made_here.push_back(l.result);
        continue;
      }
      const ir::Op& op = *l.op;
      if (l.operands.size() != op.operands.size() || l.reads_as.size() != op.operands.size())
        bad(op, "has ", l.operands.size(), " lowered operands and ", l.reads_as.size(),
            " operand layouts for ", op.operands.size(), " IR operands");
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const size_t u = l.operands[i];
        if (u >= lf_.values.size() || !defined_[u])
          bad(op, "reads operand ", i, " from ", name(u),
              ", a conversion not defined before it in its block or an enclosing one");
        const LoweredValue& v = lf_.values[u];
        if (v.ir != op.operands[i])
          bad(op, "reads operand ", i, " from ", name(u), ", which holds %", v.ir, ", not %",
              op.operands[i]);
        if (v.layout != l.reads_as[i])
          bad(op, "reads operand ", i, " (", name(u), ", ", to_string(v.layout), ") as ",
              to_string(l.reads_as[i]), " with no convert_layout between them");
      }
      if (l.regions.size() != op.regions.size())
        bad(op, "has ", l.regions.size(), " lowered regions for ", op.regions.size());
      for (const LoweredBlock& r : l.regions) block(r);
    }
    for (size_t r : made_here) defined_[r] = false;  // out of scope past its block
  }

 private:
  void convert(const LoweredOp& l) {
    if (l.source >= lf_.values.size() || l.result >= lf_.values.size() || l.result < n_ir_)
      fail<InternalError>("lowered form of '", lf_.fn->name, "': a convert_layout from ",
                          name(l.source), " to ", name(l.result), " names no conversion result");
    if (!defined_[l.source])
      fail<InternalError>("lowered form of '", lf_.fn->name, "': convert_layout ", name(l.result),
                          " converts ", name(l.source), " before it is defined");
    if (defined_[l.result])
      fail<InternalError>("lowered form of '", lf_.fn->name, "': ", name(l.result),
                          " is defined twice");
    if (lf_.values[l.source].ir != lf_.values[l.result].ir)
      fail<InternalError>("lowered form of '", lf_.fn->name, "': convert_layout ", name(l.result),
                          " holds another IR value than its source ", name(l.source));
    defined_[l.result] = true;
  }

  std::string name(size_t u) const {
    if (u < n_ir_) return detail::cat("%", u);
    return detail::cat("%c", u - n_ir_);
  }

  template <class... Parts>
  [[noreturn]] void bad(const ir::Op& op, Parts&&... parts) const {
    fail_at<InternalError>(op.loc, "lowered form of '", lf_.fn->name, "': ", ir::mnemonic(op.kind),
                           " ", std::forward<Parts>(parts)...);
  }

  const LoweredFunction& lf_;
  size_t n_ir_;
  std::vector<bool> defined_;
};

class Printer {
 public:
  explicit Printer(const LoweredFunction& lf) : lf_(lf), n_ir_(lf.fn->values.size()) {}

  void block(const LoweredBlock& b, const ir::Block* ir_block, int depth) {
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    if (ir_block && !ir_block->args.empty()) {
      out_ << pad << "args";
      for (size_t i = 0; i < ir_block->args.size(); ++i)
        out_ << (i ? ", " : " ") << typed(ir_block->args[i]);
      out_ << "\n";
    }
    for (const LoweredOp& l : b.ops) {
      if (!l.op) {
        out_ << pad << name(l.result) << " = convert_layout " << name(l.source) << ": "
             << to_string(lf_.values[l.source].layout) << " -> "
             << to_string(lf_.values[l.result].layout) << "\n";
        continue;
      }
      out_ << pad;
      for (size_t i = 0; i < l.op->results.size(); ++i)
        out_ << (i ? ", " : "") << typed(l.op->results[i]);
      out_ << (l.op->results.empty() ? "" : " = ") << ir::mnemonic(l.op->kind);
      for (size_t i = 0; i < l.operands.size(); ++i)
        out_ << (i ? ", " : " ") << name(l.operands[i]);
      out_ << (l.regions.empty() ? "\n" : " {\n");
      for (size_t r = 0; r < l.regions.size(); ++r) {
        if (r) out_ << pad << "} {\n";
        block(l.regions[r], &l.op->regions.at(r), depth + 1);
      }
      if (!l.regions.empty()) out_ << pad << "}\n";
    }
  }

  std::string text() const { return out_.str(); }

 private:
  std::string name(size_t u) const {
    if (u < n_ir_) return detail::cat("%", u);
    return detail::cat("%c", u - n_ir_);
  }
  std::string typed(ir::ValueId v) const {
    return detail::cat(name(v), ": ", ir::to_string(lf_.fn->type(v)), " ",
                       to_string(lf_.values.at(v).layout));
  }

  const LoweredFunction& lf_;
  size_t n_ir_;
  std::ostringstream out_;
};

}  // namespace

LoweredFunction lower_layouts(const ir::Function& f, const LayoutPlan& plan) {
  LoweredFunction lf;
  Lowerer(f, plan, lf).block(f.body, lf.body);
  return lf;
}

void verify_lowered(const LoweredFunction& lf) {
  Verifier(lf).block(lf.body);
}

std::string print_lowered(const LoweredFunction& lf) {
  Printer p(lf);
  p.block(lf.body, &lf.fn->body, 1);
  return detail::cat("kernel ", lf.fn->name, "\n", p.text());
}

}  // namespace tessera::backend::cuda

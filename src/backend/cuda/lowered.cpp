#include "tessera/backend/cuda/lowered.hpp"

#include <set>
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
          convert.kind = LoweredKind::ConvertLayout;
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
    if (lf.pipeline) {
      ring_.resize(lf.pipeline->buffers.size());
      for (size_t b = 0; b < ring_.size(); ++b)
        for (ir::ValueId v : lf.pipeline->buffers[b].views) view_of_[v] = b;
    }
  }

  void block(const LoweredBlock& b) {
    std::vector<size_t> made_here;
    for (const LoweredOp& l : b.ops) {
      if (l.kind == LoweredKind::AsyncCopy || l.kind == LoweredKind::BarrierWait ||
          l.kind == LoweredKind::BarrierArrive) {
        pipe(l);
        continue;
      }
      if (l.kind == LoweredKind::ConvertLayout || !l.op) {
        if (l.source < lf_.values.size()) read_slot(lf_.values[l.source].ir, nullptr);
        convert(l);
        made_here.push_back(l.result);
        continue;
      }
      const ir::Op& op = *l.op;
      if (lf_.pipeline)
        for (size_t rb = 0; rb < ring_.size(); ++rb)
          if (&op == lf_.pipeline->buffers[rb].load)
            ring_bad(rb, "is still loaded by its IR load: the async copy replaces it");
      for (ir::ValueId v : op.operands) read_slot(v, &op);
      if (lf_.pipeline && &op == lf_.pipeline->loop) {
        loop(l);
        continue;
      }
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
      if (depth_ >= 0) ++depth_;
      for (const LoweredBlock& r : l.regions) block(r);
      if (depth_ >= 0) --depth_;
    }
    for (size_t r : made_here) defined_[r] = false;  // out of scope past its block
  }

 private:
  // The state of one ring buffer while the verifier walks the kernel.
  struct Slot {
    std::set<int> before_loop;   // iterations (0, 1, ...) copied before the loop
    std::set<int> in_body;       // `ahead`s copied in the body
    std::set<int> empty_waited;  // `ahead`s whose empty barrier the body waited on so far
    bool full_waited = false;    // this iteration's (a once-buffer: its one copy)
    bool released = false;       // this iteration's slot, by barrier_arrive empty
  };

  void loop(const LoweredOp& l) {
    const ir::Op& op = *l.op;
    if (l.regions.size() != 1 || op.regions.size() != 1)
      bad(op, "is pipelined but has ", l.regions.size(), " lowered regions");
    for (size_t b = 0; b < ring_.size(); ++b)
      if (!lf_.pipeline->buffers[b].once) {
        ring_[b].full_waited = ring_[b].released = false;
        ring_[b].empty_waited.clear();
      }
    depth_ = 0;
    block(l.regions[0]);
    depth_ = -1;
    for (size_t b = 0; b < ring_.size(); ++b) {
      if (lf_.pipeline->buffers[b].once) continue;
      const Slot& s = ring_[b];
      if (s.in_body.size() != 1)
        ring_bad(b, "is copied ", s.in_body.size(), " times in each iteration of the loop");
      const int ahead = *s.in_body.begin();
      for (int d = 0; d < ahead; ++d)
        if (!s.before_loop.count(d))
          ring_bad(b, "holds no copy of iteration ", d, "'s tile: the loop copies ", ahead,
                   " iterations ahead and the copies before it miss that one");
      if (s.before_loop.size() != static_cast<size_t>(ahead))
        ring_bad(b, "is copied before the loop for iterations the loop copies again");
      if (!s.released)
        ring_bad(b,
                 "is never released by a barrier_arrive empty in the loop: its next copy "
                 "would wait forever");
    }
  }

  // One of the pipeline's ops.
  void pipe(const LoweredOp& l) {
    if (!lf_.pipeline || l.buffer >= ring_.size())
      fail<InternalError>("lowered form of '", lf_.fn->name, "': ", kind_name(l),
                          " names no buffer of a pipelined loop");
    const RingBuffer& rb = lf_.pipeline->buffers[l.buffer];
    Slot& s = ring_[l.buffer];
    const int stages = lf_.pipeline->stages;
    if (depth_ > 0)
      ring_bad(l.buffer, kind_name(l),
               " under a condition in the loop: it must run each "
               "iteration");
    if (rb.once) {
      if (depth_ == 0 || l.ahead != 0)
        ring_bad(l.buffer, "is copied once, before the loop, but ", kind_name(l),
                 " names it in slot it+", l.ahead, " of the loop");
      if (l.kind == LoweredKind::AsyncCopy) {
        if (!s.before_loop.insert(0).second) ring_bad(l.buffer, "is copied twice");
      } else if (l.kind == LoweredKind::BarrierWait && l.barrier == Barrier::Full) {
        if (s.before_loop.empty()) ring_bad(l.buffer, "is waited on before it is copied");
        s.full_waited = true;
      }
      return;
    }
    if (l.ahead < 0 || l.ahead >= stages)
      ring_bad(l.buffer, kind_name(l), " names slot it+", l.ahead, " of a ring of ", stages,
               " stages: that slot still holds the tile of iteration it+", l.ahead - stages,
               ", which may not have been read yet (a slot overwritten too early)");
    if (depth_ < 0) {
      if (l.kind != LoweredKind::AsyncCopy)
        ring_bad(l.buffer, kind_name(l), " before the loop: the ring's barriers are the loop's");
      if (!s.before_loop.insert(l.ahead).second)
        ring_bad(l.buffer, "is copied twice for iteration ", l.ahead);
      return;
    }
    if (l.kind == LoweredKind::AsyncCopy) {
      if (!s.empty_waited.count(l.ahead))
        ring_bad(l.buffer, "is copied into slot it+", l.ahead,
                 " before a barrier_wait empty on it: the readers of iteration it+",
                 l.ahead - stages, " may still use that slot (a slot overwritten too early)");
      s.in_body.insert(l.ahead);
    } else if (l.kind == LoweredKind::BarrierWait && l.barrier == Barrier::Empty) {
      s.empty_waited.insert(l.ahead);
    } else if (l.kind == LoweredKind::BarrierWait) {
      if (l.ahead != 0)
        ring_bad(l.buffer, "waits on slot it+", l.ahead,
                 "'s full barrier: the loop reads only its own iteration's slot");
      s.full_waited = true;
    } else {
      if (l.barrier != Barrier::Empty || l.ahead != 0)
        ring_bad(l.buffer, "arrives on a barrier other than its own slot's empty one");
      if (!s.full_waited) ring_bad(l.buffer, "releases its slot before waiting for it");
      s.released = true;
    }
  }

  // A read of IR value v (by op, or by a conversion when op is null): when v lives in a buffer,
  // its slot must be filled and not yet released.
  void read_slot(ir::ValueId v, const ir::Op* op) {
    const auto it = view_of_.find(v);
    if (it == view_of_.end()) return;
    const size_t b = it->second;
    const RingBuffer& rb = lf_.pipeline->buffers[b];
    // A reshape or transpose that makes another view of the same bytes reads nothing yet.
    if (op)
      for (ir::ValueId r : op->results)
        if (const auto same = view_of_.find(r); same != view_of_.end() && same->second == b) return;
    const Slot& s = ring_[b];
    const std::string who = op ? std::string(ir::mnemonic(op->kind)) : "a convert_layout";
    if (!rb.once && depth_ < 0) ring_bad(b, "is read outside its pipelined loop by ", who);
    if (!s.full_waited)
      ring_bad(b, "is read by ", who,
               " before a barrier_wait full on its slot: the copy may not "
               "have landed");
    if (!rb.once && s.released)
      ring_bad(b, "is read by ", who,
               " after barrier_arrive empty released its slot: the next "
               "copy may overwrite it");
  }

  static const char* kind_name(const LoweredOp& l) {
    if (l.kind == LoweredKind::AsyncCopy) return "async_copy";
    return l.kind == LoweredKind::BarrierWait ? "barrier_wait" : "barrier_arrive";
  }

  template <class... Parts>
  [[noreturn]] void ring_bad(size_t b, Parts&&... parts) const {
    const RingBuffer& rb = lf_.pipeline->buffers[b];
    fail<InternalError>("lowered form of '", lf_.fn->name, "': ring buffer ", b, " (%",
                        rb.load->results.at(0), ") ", std::forward<Parts>(parts)...);
  }

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
  std::vector<Slot> ring_;
  std::map<ir::ValueId, size_t> view_of_;
  int depth_ = -1;  // -1 outside the pipelined loop, else how deep inside its body
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
      if (l.kind == LoweredKind::AsyncCopy || l.kind == LoweredKind::BarrierWait ||
          l.kind == LoweredKind::BarrierArrive) {
        out_ << pad << pipe(l) << "\n";
        continue;
      }
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
        const bool pipelined = lf_.pipeline && l.op == lf_.pipeline->loop;
        in_loop_ = in_loop_ || pipelined;
        block(l.regions[r], &l.op->regions.at(r), depth + 1);
        if (pipelined) in_loop_ = false;
      }
      if (!l.regions.empty()) out_ << pad << "}\n";
    }
  }

  std::string text() const { return out_.str(); }

  // The ring, one line (before the kernel's ops).
  std::string ring() const {
    const PipelinedLoop& p = *lf_.pipeline;
    std::string s = detail::cat("pipeline: ", p.stages, " stages of ", p.stage_bytes, " bytes");
    for (size_t b = 0; b < p.buffers.size(); ++b) {
      const RingBuffer& rb = p.buffers[b];
      s += detail::cat(b ? "; " : ": ", "ring[", b, "] %", rb.load->results.at(0), " ", rb.bytes,
                       " bytes at +", rb.offset, rb.once ? " once" : "");
    }
    return s + "\n";
  }

 private:
  std::string pipe(const LoweredOp& l) const {
    const std::string slot =
        lf_.pipeline->buffers.at(l.buffer).once ? detail::cat("ring[", l.buffer, "]")
        : in_loop_
            ? detail::cat("ring[", l.buffer, "] slot it+", l.ahead)
            : detail::cat("ring[", l.buffer, "] slot ", l.ahead, " (iteration ", l.ahead, ")");
    const char* barrier = l.barrier == Barrier::Full ? "full" : "empty";
    if (l.kind == LoweredKind::AsyncCopy)
      return detail::cat(typed(lf_.pipeline->buffers.at(l.buffer).load->results.at(0)),
                         " = async_copy -> ", slot);
    return detail::cat(l.kind == LoweredKind::BarrierWait ? "barrier_wait " : "barrier_arrive ",
                       barrier, " ", slot);
  }
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
  bool in_loop_ = false;  // printing the pipelined loop's body: slots are named from `it`
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
  return detail::cat("kernel ", lf.fn->name, "\n", lf.pipeline ? p.ring() : "", p.text());
}

}  // namespace tessera::backend::cuda

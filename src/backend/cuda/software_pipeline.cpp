#include "tessera/backend/cuda/software_pipeline.hpp"

#include <algorithm>
#include <set>

#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

namespace {

LoweredOp pipe_op(LoweredKind kind, size_t buffer, int ahead, Barrier barrier = Barrier::Full) {
  LoweredOp l;
  l.kind = kind;
  l.buffer = buffer;
  l.ahead = ahead;
  l.barrier = barrier;
  return l;
}

// Whether l, or an op nested in it, reads one of `views` (itself or through a conversion).
bool reads(const LoweredFunction& lf, const LoweredOp& l, const std::set<ir::ValueId>& views) {
  if (l.kind == LoweredKind::ConvertLayout && views.count(lf.values.at(l.source).ir)) return true;
  if (l.op)
    for (ir::ValueId v : l.op->operands)
      if (views.count(v)) return true;
  for (const LoweredBlock& r : l.regions)
    for (const LoweredOp& o : r.ops)
      if (reads(lf, o, views)) return true;
  return false;
}

[[noreturn]] void misplaced(const LoweredFunction& lf, const RingBuffer& b, const char* where) {
  fail<InternalError>("software pipeline of '", lf.fn->name, "': the load of %",
                      b.load->results.at(0), " is not ", where);
}

}  // namespace

int ring_stages(int64_t free_bytes, int64_t stage_bytes, int max_stages) {
  if (stage_bytes <= 0 || free_bytes <= 0) return 0;
  return static_cast<int>(std::min<int64_t>(max_stages, free_bytes / stage_bytes));
}

PipelinedLoop mma_ring(const MmaPipeline& p, int stages) {
  PipelinedLoop r;
  r.loop = p.loop;
  r.stages = stages;
  r.stage_bytes = p.stage_bytes();
  r.buffers.push_back({p.load_a, {p.load_a->results.at(0)}, 0, p.a_bytes(), false});
  r.buffers.push_back({p.load_b, {p.load_b->results.at(0)}, p.a_bytes(), p.b_bytes(), false});
  return r;
}

PipelinedLoop attention_ring(const ir::Function& f, const AttentionPipeline& a, int stages) {
  // A buffer's views: its load's result and the in-shared values made from it (reshapes,
  // transposes), in the order ops define them.
  auto views = [&](const ir::Op* load) {
    std::vector<ir::ValueId> v{load->results.at(0)};
    ir::walk(f.body, [&](const ir::Op& op) {
      if (op.results.size() != 1 || !a.in_shared.count(op.results[0])) return;
      for (ir::ValueId u : op.operands)
        if (std::find(v.begin(), v.end(), u) != v.end()) {
          v.push_back(op.results[0]);
          return;
        }
    });
    return v;
  };
  PipelinedLoop r;
  r.loop = a.loop;
  r.stages = stages;
  r.stage_bytes = a.stage_bytes();
  r.buffers.push_back({a.k.load, views(a.k.load), 0, a.kv_bytes(), false});
  r.buffers.push_back({a.v.load, views(a.v.load), a.kv_bytes(), a.kv_bytes(), false});
  r.buffers.push_back({a.q.load, views(a.q.load), 0, a.q_bytes(), true});
  return r;
}

LoweredFunction software_pipeline(const LoweredFunction& lf, const PipelinedLoop& ring) {
  LoweredFunction out = lf;
  out.pipeline = ring;
  std::vector<LoweredOp>& top = out.body.ops;
  const auto loop =
      std::find_if(top.begin(), top.end(), [&](const LoweredOp& l) { return l.op == ring.loop; });
  if (loop == top.end() || loop->regions.size() != 1)
    fail<InternalError>("software pipeline of '", lf.fn->name,
                        "': the pipelined loop is not a for op of the kernel's top-level block");
  std::vector<LoweredOp> body = std::move(loop->regions[0].ops);
  const size_t n = ring.buffers.size();
  const int last = ring.stages - 1;

  // The loop's body: refill the slot of iteration it + stages - 1 once its readers (iteration
  // it - 1) released it, wait for this iteration's tiles, compute, release each slot after its
  // last reader.
  std::vector<LoweredOp> piped;
  for (size_t b = 0; b < n; ++b) {
    if (ring.buffers[b].once) continue;
    piped.push_back(pipe_op(LoweredKind::BarrierWait, b, last, Barrier::Empty));
    piped.push_back(pipe_op(LoweredKind::AsyncCopy, b, last));
  }
  for (size_t b = 0; b < n; ++b)
    if (!ring.buffers[b].once) piped.push_back(pipe_op(LoweredKind::BarrierWait, b, 0));
  std::vector<size_t> last_reader(n, SIZE_MAX);
  std::vector<bool> found(n, false);
  std::vector<LoweredOp> rest;
  for (LoweredOp& l : body) {
    bool is_load = false;
    for (size_t b = 0; b < n; ++b)
      if (l.op == ring.buffers[b].load && !ring.buffers[b].once) is_load = found[b] = true;
    if (is_load) continue;  // the async copy replaces it
    for (size_t b = 0; b < n; ++b) {
      const std::set<ir::ValueId> views(ring.buffers[b].views.begin(), ring.buffers[b].views.end());
      if (!ring.buffers[b].once && reads(lf, l, views)) last_reader[b] = rest.size();
    }
    rest.push_back(std::move(l));
  }
  for (size_t i = 0; i < rest.size(); ++i) {
    piped.push_back(std::move(rest[i]));
    for (size_t b = 0; b < n; ++b)
      if (last_reader[b] == i)
        piped.push_back(pipe_op(LoweredKind::BarrierArrive, b, 0, Barrier::Empty));
  }
  for (size_t b = 0; b < n; ++b) {
    if (ring.buffers[b].once) continue;
    if (!found[b]) misplaced(lf, ring.buffers[b], "in the pipelined loop's body");
    // A tile no op reads: released at once.
    if (last_reader[b] == SIZE_MAX)
      piped.push_back(pipe_op(LoweredKind::BarrierArrive, b, 0, Barrier::Empty));
  }
  loop->regions[0].ops = std::move(piped);

  // Before the loop: a once-buffer's copy where its load was, and the copies of the first
  // stages - 1 iterations and the waits for the once-buffers just before the loop.
  std::vector<LoweredOp> before;
  std::vector<LoweredOp> new_top;
  for (LoweredOp& l : top) {
    if (l.op == ring.loop) {
      for (int d = 0; d < last; ++d)
        for (size_t b = 0; b < n; ++b)
          if (!ring.buffers[b].once) new_top.push_back(pipe_op(LoweredKind::AsyncCopy, b, d));
      for (size_t b = 0; b < n; ++b)
        if (ring.buffers[b].once) new_top.push_back(pipe_op(LoweredKind::BarrierWait, b, 0));
      new_top.push_back(std::move(l));
      continue;
    }
    bool once_load = false;
    for (size_t b = 0; b < n; ++b)
      if (ring.buffers[b].once && l.op == ring.buffers[b].load) {
        new_top.push_back(pipe_op(LoweredKind::AsyncCopy, b, 0));
        once_load = true;
      }
    if (!once_load) new_top.push_back(std::move(l));
  }
  for (size_t b = 0; b < n; ++b) {
    if (!ring.buffers[b].once) continue;
    const bool copied = std::any_of(new_top.begin(), new_top.end(), [&](const LoweredOp& l) {
      return l.kind == LoweredKind::AsyncCopy && l.buffer == b;
    });
    if (!copied) misplaced(lf, ring.buffers[b], "before the pipelined loop");
  }
  out.body.ops = std::move(new_top);
  return out;
}

}  // namespace tessera::backend::cuda

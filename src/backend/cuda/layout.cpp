#include "tessera/backend/cuda/layout.hpp"

#include <algorithm>
#include <cstdlib>

namespace tessera::backend::cuda {
namespace {

using ir::OpClass;
using ir::OpKind;
using ir::ValueId;

// An elementwise kernel's threads per tile, and per block (blocks_per_tile splits the former).
constexpr int64_t kMaxTileThreads = 16384;
constexpr int kMaxBlockThreads = 512;

int64_t pow2_ceil(int64_t x) {
  int64_t p = 1;
  while (p < x) p *= 2;
  return p;
}
bool is_pow2(int64_t x) {
  return x > 0 && (x & (x - 1)) == 0;
}

// The layout a loop-carried value (or an if result) takes when its incoming values disagree:
// Uniform converts into anything for free; an mma accumulator stays in fragments; any other
// disagreement meets in the distributed layout.
Layout join(const Layout& a, const Layout& b) {
  if (a == b) return a;
  if (a.kind == LayoutKind::Uniform) return b;
  if (b.kind == LayoutKind::Uniform) return a;
  if (a.kind == LayoutKind::MmaAcc || b.kind == LayoutKind::MmaAcc) return {LayoutKind::MmaAcc, {}};
  return {LayoutKind::Distributed, {}};
}

const Layout kUniform{LayoutKind::Uniform, {}};
const Layout kDistributed{LayoutKind::Distributed, {}};
const Layout kMmaAcc{LayoutKind::MmaAcc, {}};
const Layout kShared{LayoutKind::Shared, {}};

class Planner {
 public:
  Planner(const ir::Function& f, const KernelSpec& spec, bool split_tiles, LayoutPlan& plan)
      : f_(f), spec_(spec), split_tiles_(split_tiles), p_(plan) {}

  void run() {
    p_.of.assign(f_.values.size(), kUniform);
    find_deferred_loads(f_.body);
    choose_widths();
    block(f_.body);
  }

 private:
  const ir::Type& type(ValueId v) const { return f_.type(v); }
  const Layout& of(ValueId v) const { return p_.of[v]; }
  void set(ValueId v, Layout l) { p_.of[v] = std::move(l); }

  // Records that `op` reads operand i in layout l (nothing when it already is).
  void want(const ir::Op& op, size_t i, const Layout& l) {
    if (of(op.operands[i]) != l) p_.convert[{&op, i}] = l;
  }

  // A load whose single use is an a/b operand of an mma later in the same block is landed in
  // shared memory by that mma (DESIGN §6: a load whose only users are mma operands goes to
  // shared memory directly). Moving the load to the mma is safe: inputs never change during a
  // launch, and its tile indices are SSA values already defined.
  void find_deferred_loads(const ir::Block& root) {
    uses_.assign(f_.values.size(), 0);
    ir::walk(root, [&](const ir::Op& op) {
      for (ValueId v : op.operands) ++uses_[v];
    });
    deferred_.assign(f_.values.size(), false);
    mma_operand_.assign(f_.values.size(), false);
    ir::walk(root, [&](const ir::Op& op) {
      if (op.kind == OpKind::Mma)
        for (ValueId v : op.operands) mma_operand_[v] = true;
    });
    mark_deferred(root, uses_);
    def_.assign(f_.values.size(), nullptr);
    ir::walk(root, [&](const ir::Op& op) {
      for (ValueId r : op.results) def_[r] = &op;
    });
  }
  void mark_deferred(const ir::Block& b, const std::vector<int>& uses) {
    std::vector<ValueId> loads_here;
    for (const ir::Op& op : b.ops) {
      if (op.kind == OpKind::Load && !type(op.results[0]).is_scalar())
        loads_here.push_back(op.results[0]);
      if (op.kind == OpKind::Mma)
        for (size_t i = 0; i < 2; ++i) {
          const ValueId v = op.operands[i];
          if (uses[v] == 1 &&
              std::find(loads_here.begin(), loads_here.end(), v) != loads_here.end())
            deferred_[v] = true;
        }
      // A transposed load (load_t: a load whose only user permutes it) is read straight into
      // shared memory in the permuted order, coalesced along the tensor's contiguous axis, and
      // each thread takes its result elements from there: no registers for the untransposed
      // tile. A permute that feeds an mma keeps its own path (the mma stages it itself).
      if (op.kind == OpKind::Permute && !mma_operand_[op.results[0]]) {
        const ValueId v = op.operands[0];
        bool identity = true;
        for (size_t i = 0; i < op.attrs.perm.size(); ++i)
          identity &= op.attrs.perm[i] == static_cast<int64_t>(i);
        if (!identity && uses[v] == 1 &&
            std::find(loads_here.begin(), loads_here.end(), v) != loads_here.end())
          deferred_[v] = true;
      }
      for (const ir::Block& r : op.regions) mark_deferred(r, uses);
    }
  }

  // V: the widest vector any global access can use (16 bytes of the narrowest such dtype).
  // T: enough threads that each holds at most 8 elements of the largest tile (16 when the kernel
  // reduces, whose cross-thread steps grow with the thread count), and enough warps for the mma
  // accumulators; a power of two in [32, 512]. A kernel of elementwise ops only (each thread
  // works on its own elements: no shared memory, shuffles or barriers) holds at most 8 elements a
  // thread whatever the tile, its T threads split into S blocks of at most 512 (blocks_per_tile).
  // Measured on an H200 at 2^28 elements: f16 add reaches 4.1 TB/s with 8 elements a thread, 3.7
  // with 16, 2.4 with 32 (f32: 4.3 for all); 4.26 with 512 threads a block, 4.11 with 1024;
  // softmax of 4096-wide f16 rows runs 15% faster with 16 than with 8.
  void choose_widths() {
    int vec = 1;
    int64_t largest = 1;
    int mma_threads = 32;
    bool reduces = false;
    bool reduces_in_loop = false;  // a Reduce inside a For
    for (const ir::Op& op : f_.body.ops)
      if (op.kind == OpKind::For)
        ir::walk(op.regions[0], [&](const ir::Op& inner) {
          reduces_in_loop |= ir::op_info(inner.kind).cls == OpClass::Reduce;
        });
    // A reduction across the rows of a tile (along an axis other than the last, over more than
    // one element), or one inside a loop: not a one-pass row-wise kernel (decode attention's
    // probabilities times values, its combine's weighted sum of chunks; linear's dot products
    // summed chunk by chunk along K), so no occupancy request below.
    bool across_rows = reduces_in_loop;
    bool has_mma = false;
    // A transpose that moves the last axis of a multi-row tile moves the elements between threads
    // through shared memory, as a reduction across rows does: no occupancy request either where
    // the rows fit in registers (decode attention's combine in one step sums its [32, 128]
    // partials as a transposed tile: 856-1196 bytes of spills a thread under the 85-register
    // request, ptxas sm_90a bf16). Rows too long to hold are streamed as before.
    bool transposes = false;
    // A tile stored in pieces (store_part): not one row loaded, reduced and stored either. (ptxas,
    // sm_90a, bf16, Qwen3's decode step with the cache append folded into the QK-norm and RoPE,
    // [2, 128] query heads and two [1, 128] pieces: ~300 bytes of spills a thread under the
    // 64-register bound, none in 142 registers without it.)
    bool pieces = false;
    // A matrix-vector product: a tile of several rows times a row broadcast over them, summed
    // along the last axis (decode's linear layers, a block's rows of w against x's row). Each
    // thread holds its share of both; it asks for 1024 threads all the same (below).
    bool matvec = false;
    int reductions = 0;           // Reduce ops (a LayerNorm has two: the mean, then the variance)
    std::vector<int64_t> loaded;  // elements of each tile loaded from memory
    // No op that works across threads by its nature. Others may still turn out to (a broadcast
    // through shared memory, a repeated store's barrier): emit() then plans without the split.
    bool elementwise_only = true;
    auto tile = [&](const Shape& s) { largest = std::max(largest, numel(s)); };
    ir::walk(f_.body, [&](const ir::Op& op) {
      const ir::OpClass cls = ir::op_info(op.kind).cls;
      if (cls == OpClass::Reduce || cls == OpClass::ArgReduce || cls == OpClass::Scan ||
          cls == OpClass::Mma || cls == OpClass::Permute || cls == OpClass::Slice ||
          cls == OpClass::Gather || cls == OpClass::Print || !op.regions.empty())
        elementwise_only = false;
      pieces |= op.kind == OpKind::StorePart;
      if (op.kind == OpKind::Accumulate) {  // one atomic per element: no vector width
        tile(type(op.operands[0]).shape);
      } else if (cls == OpClass::Load || cls == OpClass::Store) {
        const ir::Param& p = f_.params.at(op.attrs.param);
        // A store_part's threads hold its piece, not the tile it lands in: a decode step's
        // cache append owns every position of a sequence ([1, S, 1, D]) and writes one of them,
        // and sizing the block by the tile gave it 256-512 threads and ~2x the spills for a [1, D]
        // row.
        const Shape& shape = cls == OpClass::Load           ? op.attrs.shape
                             : op.kind == OpKind::StorePart ? type(op.operands[0]).shape
                                                            : p.tile_shape;
        if (shape.empty()) return;
        vec = std::max(vec, vector_chunk(p.dtype, spec_.tensors.at(op.attrs.param), shape, 16));
        // An accumulator is stored straight from its fragments, not from a distributed tile.
        if (cls == OpClass::Load || !from_mma(op.operands[0])) tile(shape);
        if (cls == OpClass::Load) loaded.push_back(numel(shape));
      } else if (op.kind == OpKind::Iota || cls == OpClass::Broadcast || cls == OpClass::Permute ||
                 cls == OpClass::Slice || cls == OpClass::Gather) {
        tile(type(op.results[0]).shape);
        // A transpose that moves the last axis of a tile of several rows.
        if (cls == OpClass::Permute) {
          const Shape& in = type(op.operands[0]).shape;
          const auto& perm = op.attrs.perm;
          transposes |= !perm.empty() && perm.back() + 1 != static_cast<int64_t>(perm.size()) &&
                        numel(in) > in.back();
        }
      } else if (cls == OpClass::Reduce || cls == OpClass::ArgReduce || cls == OpClass::Scan) {
        reduces = true;
        reductions += cls == OpClass::Reduce ? 1 : 0;
        const Shape& in = type(op.operands[0]).shape;
        tile(in);
        if (cls == OpClass::Reduce && op.attrs.axis >= 0 &&
            op.attrs.axis + 1 < static_cast<int>(in.size()) && in[op.attrs.axis] > 1)
          across_rows = true;
        if (cls == OpClass::Reduce && op.attrs.axis + 1 == static_cast<int>(in.size()) &&
            numel(in) > in.back())
          if (const ir::Op* product = def_[op.operands[0]]; product && product->kind == OpKind::Mul)
            for (ValueId v : product->operands)
              matvec |= def_[v] && def_[v]->kind == OpKind::Broadcast;
      } else if (cls == OpClass::Mma) {
        has_mma = true;
        const Shape& acc = type(op.results[0]).shape;
        if (mma_on_tensor_cores(type(op.operands[0]).dtype, op.attrs.tf32)) {
          const int64_t frags = ((acc[0] + 15) / 16) * ((acc[1] + 7) / 8);
          const int64_t warps = std::clamp<int64_t>(pow2_ceil((frags + 7) / 8), 1, 8);
          mma_threads = std::max<int>(mma_threads, static_cast<int>(32 * warps));
        } else {
          tile(acc);
        }
      }
    });
    p_.vec = vec;
    if (p_.pipeline) {  // the consumer warpgroups hold every tile; the producer comes on top
      p_.threads = p_.pipeline->consumer_threads();
      return;
    }
    // A reduction's thread holds 32 elements of its row, as Triton's 8 warps do at 8192 columns:
    // the per-tile work (tile coordinate, bounds test, addresses, the cross-warp exchange) is then
    // shared by twice the elements of 16. Measured on an H200 (bench/rowwise, f16, GB/s):
    // softmax 8192^2 2589 -> 3945 (exact 1997 -> 2844), 32768x4096 3614 -> 4053.
    int64_t per_thread = reduces ? 32 : 8;
    if (const char* e = std::getenv("TESSERA_AB_PER_THREAD"); e && reduces)
      per_thread = std::max<int64_t>(1, std::atoi(e));
    const int64_t wanted = pow2_ceil((largest + per_thread - 1) / per_thread);
    if (elementwise_only && split_tiles_) {
      // Eight elements a thread, or one vector where a vector holds more (i8: 16).
      const int64_t each = std::max<int64_t>(8, vec);
      p_.threads = static_cast<int>(
          std::clamp<int64_t>(pow2_ceil((largest + each - 1) / each), 32, kMaxTileThreads));
      p_.blocks_per_tile = std::max(1, p_.threads / kMaxBlockThreads);
      return;
    }
    p_.threads = std::max<int>(static_cast<int>(std::clamp<int64_t>(wanted, 32, 512)), mma_threads);
    // A row-wise kernel (reductions, no mma) moves each element once and waits on memory between
    // its phases (load, reduce, store): several of its blocks per multiprocessor overlap those
    // phases. Where each thread holds at most `per_thread` elements of its largest tile, ask for
    // 1024 resident threads (at most 64 registers) when it loads one such tile (softmax), 768
    // (85 registers) when it loads more (a norm's weight and bias rows, which would spill under
    // 64), and, where it loads three (below), walk the tiles with a grid of exactly the resident
    // blocks, so that a block's setup is paid once, not per row. Threads that hold more (long rows)
    // would spill. Measured on an H200 (bench/rowwise, f16 fast, GB/s, from 16 elements a thread,
    // 1024 threads, a block per row): RMSNorm 8192^2 2915 -> 3548, 32768x4096 3317 -> 3684;
    // LayerNorm 2310 -> 2920, 2901 -> 3294. The persistent grid costs softmax 7-10%: it keeps a
    // block a row. (ptxas, sm_90a, bf16: decode attention's [32, 128] key and value tiles spilled
    // ~700 bytes a thread under the 85-register bound, its combine's [32, 128] partials ~450 under
    // 64.) A matrix-vector product (rows of weights against a broadcast row) asks for 1024 too:
    // at 768, Qwen3-0.6B's q/k/v projection (2048 blocks of 64 threads) ran in 1.29 waves on an
    // H100 (ncu: a tail wave of 465 blocks); at 1024 it runs in one, and the batch-1 decode step
    // went 1.512 -> 1.484 ms (scripts/ab_decode.sh, two interleaved rounds, session 21), though
    // ptxas (sm_90a) spills 16-28 bytes a thread of the residual-add product under 64 registers.
    // Inputs loaded a whole row at a time: 1 for softmax, 2 or 3 for a norm (row, weight, bias).
    const auto row_sized = std::count(loaded.begin(), loaded.end(), largest);
    if (across_rows || pieces) {
      // no bound: the compiler's registers, one block per tile.
      // TESSERA_AB_LOOP_RESIDENT=N (an A/B switch for the next GPU session): a kernel without mma
      // that reduces inside a loop, and stores its tile whole, asks for N resident threads.
      // Decode attention's chunk kernel ([32, 128] key and value tiles, 128 threads) takes 254
      // registers, so two blocks a multiprocessor: Qwen3-0.6B's 16 heads over 17-19 chunks are
      // 272-304 blocks, more than the 264 an H100 holds at once, and a second wave of a few
      // blocks doubles its time (ncu, session 20: 12.8 us, 1.03 waves). At 384 (three blocks):
      // 168 registers and 156-236 bytes spilled a thread; at 512: 128 and ~324 (ptxas sm_90a,
      // bf16). In a decode step it also reaches the linear layers' K-loop candidates, if the
      // tuner picked one, and a combine over more than 32 chunks.
      if (const char* e = std::getenv("TESSERA_AB_LOOP_RESIDENT");
          e && reduces_in_loop && !pieces && !has_mma)
        p_.min_blocks = std::max(1, std::atoi(e) / p_.threads);
    } else if (reduces && mma_threads == 32 && largest <= per_thread * p_.threads) {
      if (transposes) return;  // the compiler's registers, one block per tile
      p_.min_blocks = std::max(1, (row_sized > 1 && !matvec ? 768 : 1024) / p_.threads);
      // A persistent grid where it loads three row-sized tiles (LayerNorm's row, weight and bias)
      // or two and multiplies rows by a broadcast vector (linear's SwiGLU over two weight
      // tensors); a block per row where it loads two and no more (RMSNorm's row and weight), and
      // for other matrix-vector products (one weight tile, or a pair tile). Measured on an H100 in
      // one run once launches flowed back to back (bench/rowwise's ring, f16 fast, GB/s, 32768x4096
      // / 8192^2, Triton's ring beside): RMSNorm persistent 2800 / 2709, a block per row 3001 /
      // 2947 (Triton 2984 / 2913); LayerNorm persistent 2618 / 2510, a block per row 2526 / 2431
      // (Triton 2854 / 2484). (The H200 numbers here were taken while that ring often drained the
      // stream.)
      if (row_sized > 2 || (row_sized > 1 && matvec)) p_.blocks_per_sm = p_.min_blocks;
      // A norm that loads three rows and reduces twice (LayerNorm: its row, weight and bias; the
      // mean, then the variance) issues all three loads before it reduces, as Triton's does, with
      // 16 elements a thread where 256 threads hold the row and 32 where they do not; its registers
      // (three rows' worth: 72 at 16 elements, 126 at 32, ptxas sm_90a f16, no spills) set the
      // resident threads: 768 and 512. Measured on an H100 (bench/rowwise's ring, fast, ms, f16 /
      // bf16, two rounds, session 20): 32768x4096 0.207 / 0.207 -> 0.194 / 0.195 (Triton's ring
      // 0.188); 8192^2 0.105 / 0.105 -> 0.096 / 0.098 (Triton 0.108). At 4096 columns 128 threads
      // at 512 resident gave 0.201, 256 at 1024 resident 0.211; at 8192 512 threads (16 a thread,
      // loads first) 0.100-0.111. (RMSNorm, two rows, lost 6% at 8192^2 with its weight loaded
      // first, and keeps its epilogue loads; so do the untimed others: a residual add's RMSNorm,
      // three rows and one reduction, and its LayerNorm, four rows.)
      // TESSERA_AB_ROWWISE_LOADS_FIRST=0 plans as before (an A/B switch), and so does an A/B run
      // that sets TESSERA_AB_PER_THREAD.
      const char* loads_ab = std::getenv("TESSERA_AB_ROWWISE_LOADS_FIRST");
      if (row_sized == 3 && reductions >= 2 && !matvec && !(loads_ab && *loads_ab == '0') &&
          !std::getenv("TESSERA_AB_PER_THREAD")) {
        const int64_t sixteen = pow2_ceil((largest + 15) / 16);
        if (sixteen <= 256) p_.threads = static_cast<int>(std::max<int64_t>(sixteen, 32));
        const int64_t each = (largest + p_.threads - 1) / p_.threads;
        p_.min_blocks = std::max(1, (each <= 16 ? 768 : 512) / p_.threads);
        p_.blocks_per_sm = p_.min_blocks;
        p_.loads_first = true;
      }
      // A/B switches (to be removed): resident threads of a norm (its grid stays persistent or
      // a block per row as chosen above; TESSERA_AB_ROW_PERSISTENT below sets that).
      if (const char* e = std::getenv("TESSERA_AB_ROW_RESIDENT"); e && row_sized > 1) {
        p_.min_blocks = std::max(1, std::atoi(e) / p_.threads);
        if (p_.blocks_per_sm > 0) p_.blocks_per_sm = p_.min_blocks;
      }
      if (const char* e = std::getenv("TESSERA_AB_EPI_GROUP"))
        p_.epilogue_group = std::max(1, std::atoi(e));
      // TESSERA_AB_ROW_PERSISTENT=0: a block per row; =1: a persistent grid wherever it loads two
      // or more row-sized tiles.
      if (const char* e = std::getenv("TESSERA_AB_ROW_PERSISTENT"); e && *e == '0')
        p_.blocks_per_sm = 0;
      else if (e && *e == '1' && row_sized > 1)
        p_.blocks_per_sm = p_.min_blocks;
      // The persistent blocks' next rows are prefetched into L2 while this one is reduced and
      // stored (Emitter::prefetch_next_tile). Measured on an H200 (bench/rowwise, f16 fast, GB/s,
      // 8192^2 / 32768x4096): RMSNorm 3597 / 3725 -> 3742 / 3917, LayerNorm 3052 / 3472 -> 3448 /
      // 3836; two rows ahead: 3267 / 3415, 3091 / 3159. (Issuing the epilogue's weight loads a
      // vector or more ahead of their use did nothing for RMSNorm, and spilled LayerNorm.)
      // (After the switches, so that the prefetch follows the grid they leave.)
      p_.prefetch_next_tile = p_.blocks_per_sm > 0 ? 1 : 0;
    } else if (reduces && mma_threads == 32) {
      p_.stream_rows = true;
      // Each streamed step issues the loads of several vectors before it uses any, so that more
      // than one 16-byte load a thread is in flight. Measured on an H200 (bench/rowwise, fast,
      // 1024x65536, GB/s, 1 / 2 / 4 vectors a step): softmax bf16 2268 / 2655 / 2597, RMSNorm
      // 1615 / 2125 / 2468, LayerNorm 993 / 1278 / 1350 (bench/results/2026-12-05-s14-gpu.md);
      // on an H100 (f16): softmax 1766 / 1933 / 2342, RMSNorm 1489 / 1843 / 2062, LayerNorm
      // 918 / 1132 / 1122 (bench/results/2026-12-05-s15-gpu.md). Four for every kernel: softmax's
      // 2% on the H200 is within its noise, its 21% on the H100 is not.
      p_.stream_group = 4;
      // A/B switch (to be removed once measured): TESSERA_AB_STREAM_STASH=0 re-reads the row
      // from memory at each pass instead of keeping it in shared memory.
      const char* stash = std::getenv("TESSERA_AB_STREAM_STASH");
      p_.stash_streamed = !(stash && *stash == '0');
      if (const char* e = std::getenv("TESSERA_AB_STREAM_BLOCKS")) p_.blocks_per_sm = std::atoi(e);
      if (const char* e = std::getenv("TESSERA_AB_STREAM_GROUP"))
        p_.stream_group = std::max(1, std::atoi(e));
    }
  }

  // v is an mma result, or a loop's carried value that an mma result is yielded into.
  bool from_mma(ValueId v) const {
    const ir::Op* d = def_[v];
    if (!d) return false;
    if (d->kind == OpKind::Mma) return true;
    if (d->kind != OpKind::For) return false;
    const size_t i = static_cast<size_t>(std::find(d->results.begin(), d->results.end(), v) -
                                         d->results.begin());
    return from_mma(d->regions[0].ops.back().operands[i]);
  }

  void block(const ir::Block& b) {
    for (const ir::Op& op : b.ops) this->op(op);
  }

  void op(const ir::Op& op) {
    for (size_t i = 0; i < op.operands.size(); ++i) p_.convert.erase({&op, i});
    const ir::OpInfo& info = ir::op_info(op.kind);
    switch (info.cls) {
      case OpClass::Interface:
        set(op.results[0], kUniform);
        return;
      case OpClass::Creation:
        set(op.results[0], op.kind == OpKind::Constant ? kUniform : kDistributed);
        return;
      case OpClass::Unary:
      case OpClass::UnaryFloat:
      case OpClass::UnaryBool:
      case OpClass::Classify:
      case OpClass::Cast:
      case OpClass::Binary:
      case OpClass::BinaryBool:
      case OpClass::BinaryFloat:
      case OpClass::BinaryInt:
      case OpClass::Compare:
      case OpClass::Select:
      case OpClass::Ternary:
        elementwise(op);
        return;
      case OpClass::Broadcast:
        broadcast(op);
        return;
      case OpClass::Reshape:
        reshape(op);
        return;
      case OpClass::Permute:
        permute(op);
        return;
      case OpClass::Gather:  // the row indices through shared memory, one element a register
        set(op.results[0], kDistributed);
        return;
      case OpClass::Slice:  // through shared memory; a slice of a uniform tile is uniform
        set(op.results[0],
            op.kind == OpKind::Slice && of(op.operands[0]).kind == LayoutKind::Uniform
                ? kUniform
                : kDistributed);
        return;
      case OpClass::Reduce:
        reduce(op);
        return;
      case OpClass::ArgReduce:  // through shared memory, one result element per thread
      case OpClass::Scan:
        want(op, 0, kDistributed);
        set(op.results[0], kDistributed);
        return;
      case OpClass::Mma:
        mma(op);
        return;
      case OpClass::Load:
        set(op.results[0], deferred_[op.results[0]]          ? kShared
                           : type(op.results[0]).is_scalar() ? kUniform
                                                             : kDistributed);
        return;
      case OpClass::Store: {
        const LayoutKind k = of(op.operands[0]).kind;
        if (k != LayoutKind::Uniform && k != LayoutKind::Distributed && k != LayoutKind::MmaAcc)
          want(op, 0, kDistributed);
        return;
      }
      case OpClass::For:
        for_loop(op);
        return;
      case OpClass::If:
        if_op(op);
        return;
      case OpClass::Yield:
      case OpClass::Print:
      case OpClass::Prefetch:  // issued in the prologue (grid_dependency_prologue)
        return;  // a yield is planned by its parent; print reads rank-0 (uniform) values
      case OpClass::Local:
        break;
    }
    fail<InternalError>("internal error (a bug in Tessera): '", ir::mnemonic(op.kind),
                        "' reached the CUDA layout pass of kernel '", f_.name,
                        "'; promote_locals must run first");
  }

  // All-uniform operands give a uniform result; otherwise the operands' common register layout,
  // or the distributed layout when they disagree. Uniform operands are read as they are.
  // An mma accumulator stays in its fragments (an epilogue: bias, activation, cast, store): the
  // other operands come to it, and a broadcast used only here is gathered straight into them.
  void elementwise(const ir::Op& op) {
    bool acc = false;
    for (ValueId v : op.operands) acc |= of(v).kind == LayoutKind::MmaAcc;
    if (acc) {
      for (size_t i = 0; i < op.operands.size(); ++i) {
        const ValueId v = op.operands[i];
        const LayoutKind k = of(v).kind;
        if (k == LayoutKind::Uniform || k == LayoutKind::MmaAcc) continue;
        const ir::Op* d = def_[v];
        if (d && d->kind == OpKind::Broadcast && uses_[v] == 1 && k == LayoutKind::Distributed)
          set(v, kMmaAcc);
        else
          want(op, i, kMmaAcc);
      }
      set(op.results[0], kMmaAcc);
      return;
    }
    Layout result = kUniform;
    for (ValueId v : op.operands) {
      const Layout& l = of(v);
      if (l.kind == LayoutKind::Uniform) continue;
      result = result.kind == LayoutKind::Uniform ? l : (result == l ? result : kDistributed);
    }
    for (size_t i = 0; i < op.operands.size(); ++i)
      if (of(op.operands[i]).kind != LayoutKind::Uniform) want(op, i, result);
    set(op.results[0], result);
  }

  void broadcast(const ir::Op& op) {
    const Layout& src = of(op.operands[0]);
    const Shape& from = type(op.operands[0]).shape;
    const Shape& to = type(op.results[0]).shape;
    if (src.kind == LayoutKind::Uniform || from == to) {
      set(op.results[0], src);  // nothing moves
      return;
    }
    // Any other source is read through shared memory (or, for a slice over `to`, in place).
    set(op.results[0], kDistributed);
  }

  void reshape(const ir::Op& op) {
    const Layout& src = of(op.operands[0]);
    if (src.kind == LayoutKind::Uniform) {
      set(op.results[0], kUniform);
    } else if (type(op.results[0]).is_scalar()) {
      want(op, 0, kUniform);  // a single element, now held by every thread
      set(op.results[0], kUniform);
    } else {
      // Row-major order is the same, so a distributed tile keeps its registers.
      want(op, 0, kDistributed);
      set(op.results[0], kDistributed);
    }
  }

  void permute(const ir::Op& op) {
    const Layout& src = of(op.operands[0]);
    bool identity = true;
    for (size_t i = 0; i < op.attrs.perm.size(); ++i) identity &= op.attrs.perm[i] == int64_t(i);
    set(op.results[0], src.kind == LayoutKind::Uniform || identity ? src : kDistributed);
  }

  void reduce(const ir::Op& op) {
    want(op, 0, kDistributed);
    const Shape& shape = type(op.operands[0]).shape;
    if (reduce_fast_path(shape, op.attrs.axis, p_.vec))
      set(op.results[0], Layout{LayoutKind::Slice, shape});
    else
      set(op.results[0], kDistributed);
  }

  void mma(const ir::Op& op) {
    // Operands a and b are staged in shared memory by the mma from whatever layout they have.
    const Layout acc =
        mma_on_tensor_cores(type(op.operands[0]).dtype, op.attrs.tf32) ? kMmaAcc : kDistributed;
    want(op, 2, acc);
    set(op.results[0], acc);
  }

  // Carried values: each slot's layout is the join of its initial value's and its yielded
  // value's layouts, found by iterating the body to a fixed point (the lattice is shallow:
  // Uniform < Slice < Distributed < MmaAcc, so this ends within a few rounds).
  void for_loop(const ir::Op& op) {
    const ir::Block& body = op.regions[0];
    const size_t carried = op.results.size();
    std::vector<Layout> slots;
    for (size_t i = 0; i < carried; ++i) slots.push_back(of(op.operands[3 + i]));
    for (int round = 0;; ++round) {
      TESSERA_INTERNAL_CHECK(round < 16, "layouts of loop-carried values do not settle");
      set(body.args[0], kUniform);
      for (size_t i = 0; i < carried; ++i) set(body.args[i + 1], slots[i]);
      block(body);
      const ir::Op& yield = body.ops.back();
      bool changed = false;
      for (size_t i = 0; i < carried; ++i) {
        Layout next = join(slots[i], of(yield.operands[i]));
        changed |= next != slots[i];
        slots[i] = std::move(next);
      }
      if (!changed) break;
    }
    const ir::Op& yield = body.ops.back();
    for (size_t i = 0; i < carried; ++i) {
      want(op, 3 + i, slots[i]);
      p_.convert.erase({&yield, i});
      want(yield, i, slots[i]);
      set(op.results[i], slots[i]);
    }
  }

  void if_op(const ir::Op& op) {
    for (const ir::Block& r : op.regions) block(r);
    const ir::Op& y0 = op.regions[0].ops.back();
    const ir::Op& y1 = op.regions[1].ops.back();
    for (size_t i = 0; i < op.results.size(); ++i) {
      const Layout l = join(of(y0.operands[i]), of(y1.operands[i]));
      p_.convert.erase({&y0, i});
      p_.convert.erase({&y1, i});
      want(y0, i, l);
      want(y1, i, l);
      set(op.results[i], l);
    }
  }

  const ir::Function& f_;
  const KernelSpec& spec_;
  const bool split_tiles_;
  LayoutPlan& p_;
  std::vector<bool> deferred_;
  std::vector<bool> mma_operand_;  // used by an mma
  std::vector<const ir::Op*> def_;
  std::vector<int> uses_;
};

}  // namespace

std::string to_string(const Layout& l) {
  switch (l.kind) {
    case LayoutKind::Uniform:
      return "uniform";
    case LayoutKind::Distributed:
      return "distributed";
    case LayoutKind::Slice:
      return "slice of " + tessera::to_string(l.parent);
    case LayoutKind::MmaAcc:
      return "mma accumulator";
    case LayoutKind::Shared:
      return "shared, landed by its mma";
  }
  return "?";
}

MmaTiling mma_tiling(const Shape& acc, int threads) {
  const int warps = std::max(1, threads / 32);
  const int mt = static_cast<int>((acc.at(0) + 15) / 16),
            nt = static_cast<int>((acc.at(1) + 7) / 8);
  MmaTiling best;
  int64_t best_cost = -1;
  int best_skew = 0;
  // The fewest covered fragments, then the squarest per-warp tile (more reuse of each fragment).
  for (int wm = 1; wm <= warps; wm *= 2) {
    MmaTiling t;
    t.m = static_cast<int>(acc[0]);
    t.n = static_cast<int>(acc[1]);
    t.warps_m = wm;
    t.warps_n = warps / wm;
    t.frags_m = (mt + wm - 1) / wm;
    t.frags_n = (nt + t.warps_n - 1) / t.warps_n;
    const int64_t cost = int64_t{t.rows()} * t.cols();
    const int skew = std::abs(t.frags_m * 16 - t.frags_n * 8);
    if (best_cost < 0 || cost < best_cost || (cost == best_cost && skew < best_skew)) {
      best = t;
      best_cost = cost;
      best_skew = skew;
    }
  }
  return best;
}

bool mma_on_tensor_cores(DType operand, bool tf32) {
  return operand == DType::F16 || operand == DType::BF16 || (tf32 && operand == DType::F32);
}

int vector_chunk(DType dtype, const TensorSpec& spec, const Shape& tile, int limit) {
  if (tile.empty() || !spec.inner_unit_stride) return 1;
  const int size = static_cast<int>(dtype_size(dtype));
  int c = std::min(16, spec.vector_bytes) / size;
  c = std::min(c, limit);
  while (c > 1 && tile.back() % c != 0) c /= 2;
  return c >= 1 && c * size >= 4 ? c : 1;
}

bool reduce_fast_path(const Shape& shape, int axis, int vec) {
  if (shape.empty() || axis != static_cast<int>(shape.size()) - 1) return false;
  const int64_t row = shape.back();
  return row % vec == 0 && is_pow2(row / vec);
}

int LayoutPlan::registers(const Layout& l, const Shape& shape) const {
  switch (l.kind) {
    case LayoutKind::Uniform:
      return 1;
    case LayoutKind::Distributed:
      return static_cast<int>(vectors(numel(shape)) * vec);
    case LayoutKind::Slice:
      return static_cast<int>(vectors(numel(l.parent)));
    case LayoutKind::MmaAcc:
      return tiling(shape).registers();
    case LayoutKind::Shared:
      return 0;
  }
  return 0;
}

MmaTiling LayoutPlan::tiling(const Shape& shape) const {
  if (pipeline && shape == Shape{pipeline->bm, pipeline->bn} &&
      pipeline->target == PipelineTarget::Ampere) {
    // mma.sync m16n8k16: the warp grid ampere_warps chose, each warp a whole warp tile.
    MmaTiling t;
    t.m = pipeline->bm;
    t.n = pipeline->bn;
    t.warps_m = pipeline->warps_m;
    t.warps_n = pipeline->warps_n;
    t.frags_m = pipeline->bm / pipeline->warps_m / 16;
    t.frags_n = pipeline->bn / pipeline->warps_n / 8;
    return t;
  }
  if (pipeline && shape == Shape{pipeline->bm, pipeline->bn}) {
    // wgmma m64nNk16: warp w of warpgroup g holds rows 64g + 16w + [0, 16), all N columns, in
    // the 16x8 fragment order of mma.sync (PTX ISA, "wgmma register fragments").
    MmaTiling t;
    t.m = pipeline->bm;
    t.n = pipeline->bn;
    t.warps_m = pipeline->bm / 16;
    t.frags_n = pipeline->bn / 8;
    return t;
  }
  return mma_tiling(shape, threads);
}

LayoutPlan plan_layouts(const ir::Function& f, const KernelSpec& spec, bool split_tiles,
                        bool pipeline) {
  TESSERA_INTERNAL_CHECK(f.stage == ir::Stage::Promoted, "kernel '", f.name,
                         "' reached the CUDA backend before promote_locals");
  if (spec.tensors.size() != f.params.size())
    fail<UsageError>("the CUDA specialization of kernel '", f.name, "' describes ",
                     spec.tensors.size(), " parameters, but the kernel has ", f.params.size(),
                     "; pass one TensorSpec per parameter (Scalar ones are ignored)");
  LayoutPlan plan;
  if (pipeline) plan.pipeline = find_mma_pipeline(f, spec);
  Planner(f, spec, split_tiles, plan).run();
  return plan;
}

}  // namespace tessera::backend::cuda

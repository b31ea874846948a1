// issue_loads_first (load_order.hpp): a kernel's independent input loads are issued before the
// first op that waits on one of them, in rounds; nothing crosses a loop; the emitted code follows.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "corpus.hpp"
#include "runtime/scoped_env.hpp"
#include "tessera/analysis/canonical_order.hpp"
#include "tessera/analysis/promote_locals.hpp"
#include "tessera/backend/cuda/launch.hpp"
#include "tessera/backend/cuda/load_order.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/verifier.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
using ir::OpKind;

// The kernel as the backend receives it: locals promoted, canonical order.
ir::Function prepared(ir::Function f) {
  analysis::promote_locals(f);
  analysis::canonical_order(f);
  return f;
}

// Index of the first op of `kind` in `b` (after `from`) that reads parameter `param` (-1: any).
size_t find(const ir::Block& b, OpKind kind, int param = -1, size_t from = 0) {
  for (size_t i = from; i < b.ops.size(); ++i)
    if (b.ops[i].kind == kind && (param < 0 || b.ops[i].attrs.param == param)) return i;
  return b.ops.size();
}

// A transposed tile summed, times a second input's row (loaded with `pad`): canonical_order puts
// the second load after the transpose, whose barrier waits for the first load's data.
ir::Function load_exchange_load(Pad pad = {}) {
  return prepared(trace_kernel<Out<float>, In<float>, In<float>>(
      "load_exchange_load",
      {out_param("y", DType::F32, {1, 32}), in_param("a", DType::F32, 2),
       in_param("m", DType::F32, 2)},
      [pad](Out<float> y, In<float> a, In<float> m) {
        const Tile<float> t = load(a, {y.tile_index(0), 0}, {32, 32});
        const Tile<float> s = sum(t.transpose(), 1).reshape({1, 32});
        y.store(s * load(m, {y.tile_index(0), 0}, {1, 32}, pad));
      }));
}

TEST(LoadOrder, ASecondLoadMovesAheadOfTheTransposeThatWaitsForTheFirst) {
  ir::Function f = load_exchange_load();
  const ir::Block& b = f.body;
  ASSERT_LT(find(b, OpKind::Permute), find(b, OpKind::Load, 2))
      << "canonical_order no longer puts the load after the transpose; this test needs a "
         "kernel that does\n"
      << ir::print(f);
  ASSERT_TRUE(backend::cuda::issue_loads_first(f));
  ir::verify_or_throw(f, "issue_loads_first");
  EXPECT_LT(find(f.body, OpKind::Load, 1), find(f.body, OpKind::Permute)) << ir::print(f);
  EXPECT_LT(find(f.body, OpKind::Load, 2), find(f.body, OpKind::Permute)) << ir::print(f);
  EXPECT_EQ(f.body.ops.back().kind, OpKind::Store);
  // Applied again, nothing moves.
  EXPECT_FALSE(backend::cuda::issue_loads_first(f));
}

TEST(LoadOrder, ALoadAtALoadedCoordinateComesInTheNextRoundBeforeTheRestOfTheBlock) {
  // A position read from memory picks a table row (a RoPE angle); x does not depend on it.
  ir::Function f = prepared(trace_kernel<Out<float>, In<int32_t>, In<float>, In<float>>(
      "rounds",
      {out_param("y", DType::F32, {1, 32}), in_param("pos", DType::I32, 1),
       in_param("table", DType::F32, 2), in_param("x", DType::F32, 2)},
      [](Out<float> y, In<int32_t> pos, In<float> table, In<float> x) {
        const Index p = load(pos, {y.tile_index(0)}, {1}).reshape({});
        const Tile<float> v = load(x, {y.tile_index(0), 0}, {1, 32});
        const Tile<float> normed = v * rsqrt(sum(v * v, 1) + 1e-6f);
        // The table's row first: canonical_order then puts the position's load, its broadcast
        // and the row's load ahead of x's.
        y.store(load(table, {p, 0}, {1, 32}) * normed);
      }));
  ASSERT_TRUE(backend::cuda::issue_loads_first(f));
  ir::verify_or_throw(f, "issue_loads_first");
  const ir::Block& b = f.body;
  const size_t pos = find(b, OpKind::Load, 1), table = find(b, OpKind::Load, 2),
               x = find(b, OpKind::Load, 3), reduce = find(b, OpKind::ReduceSum);
  ASSERT_LT(reduce, b.ops.size()) << ir::print(f);
  // Round one: the position and x; round two: the table row at the position; then the norm.
  EXPECT_LT(pos, table) << ir::print(f);
  EXPECT_LT(x, table) << ir::print(f);
  EXPECT_LT(table, reduce) << ir::print(f);
  size_t position_read = b.ops.size();  // the first op that reads the loaded position
  for (size_t i = 0; i < b.ops.size() && position_read == b.ops.size(); ++i)
    for (ir::ValueId v : b.ops[i].operands)
      if (v == b.ops[pos].results[0]) position_read = i;
  EXPECT_LT(x, position_read) << "x's load waits behind the position's\n" << ir::print(f);
}

TEST(LoadOrder, NoLoadMovesAcrossALoopAndLoadsInsideOneMoveWithinIt) {
  // Two loads in the loop's body around a transpose, and one after the loop.
  ir::Function f = prepared(trace_kernel<Out<float>, In<float>, In<float>, In<float>>(
      "loop",
      {out_param("y", DType::F32, {1, 32}), in_param("a", DType::F32, 2),
       in_param("m", DType::F32, 2), in_param("after", DType::F32, 2)},
      [](Out<float> y, In<float> a, In<float> m, In<float> after) {
        Tile<float> acc = Tile<float>::zeros({1, 32});
        for_range(0, 4, [&](Index k) {
          const Tile<float> s = sum(load(a, {k, 0}, {32, 32}).transpose(), 1).reshape({1, 32});
          acc = acc + s * load(m, {k, 0}, {1, 32});
        });
        y.store(acc * load(after, {y.tile_index(0), 0}, {1, 32}));
      }));
  const ir::Function before = f;
  std::vector<int> origin;
  ASSERT_TRUE(backend::cuda::issue_loads_first(f, &origin));
  ir::verify_or_throw(f, "issue_loads_first");
  // Each op's place before the pass, through the loop's body too: the op there is the same one.
  std::vector<const ir::Op*> old_ops, new_ops;
  ir::walk(before.body, [&](const ir::Op& op) { old_ops.push_back(&op); });
  ir::walk(f.body, [&](const ir::Op& op) { new_ops.push_back(&op); });
  ASSERT_EQ(origin.size(), new_ops.size());
  std::vector<bool> seen(old_ops.size(), false);
  for (size_t i = 0; i < new_ops.size(); ++i) {
    const auto at = static_cast<size_t>(origin[i]);
    ASSERT_LT(at, old_ops.size());
    EXPECT_FALSE(seen[at]) << "two ops from one place";
    seen[at] = true;
    EXPECT_EQ(old_ops[at]->kind, new_ops[i]->kind) << i;
    EXPECT_EQ(old_ops[at]->results, new_ops[i]->results) << i;
    EXPECT_EQ(old_ops[at]->attrs.param, new_ops[i]->attrs.param) << i;
  }
  const size_t loop = find(f.body, OpKind::For);
  ASSERT_LT(loop, f.body.ops.size());
  EXPECT_GT(find(f.body, OpKind::Load, 3), loop) << ir::print(f);
  const ir::Block& body = f.body.ops[loop].regions[0];
  EXPECT_LT(find(body, OpKind::Load, 2), find(body, OpKind::Permute)) << ir::print(f);
  EXPECT_EQ(body.ops.back().kind, OpKind::Yield);
}

TEST(LoadOrder, TheEmittedKernelIssuesBothLoadsBeforeItsFirstBarrier) {
  // The CUDA source of load_exchange_load: both loads ahead of the transpose's __syncthreads;
  // without the pass (TESSERA_AB_LOAD_ORDER=0) canonical_order's order, the second load after it.
  const ir::Function f = load_exchange_load();
  const auto order = [&](bool first) {
    backend::cuda::KernelSpec spec = aligned_spec(f, kSm90a);
    spec.issue_loads_first = first;
    const std::string src = kernel_part(build(f, spec).kernel.source);
    const size_t barrier = src.find("__syncthreads();");
    const size_t second = src.find("= load $m[");
    EXPECT_NE(barrier, std::string::npos) << src;
    EXPECT_NE(second, std::string::npos) << src;
    return second < barrier;
  };
  EXPECT_TRUE(order(true));
  EXPECT_FALSE(order(false));
  // The switch: 0 and 1 (and unset), nothing else.
  {
    const ScopedEnv off("TESSERA_AB_LOAD_ORDER", "0");
    EXPECT_FALSE(backend::cuda::load_order_enabled());
  }
  EXPECT_TRUE(backend::cuda::load_order_enabled());
  const ScopedEnv typo("TESSERA_AB_LOAD_ORDER", "off");
  EXPECT_THROW((void)backend::cuda::load_order_enabled(), UsageError);
}

TEST(LoadOrder, ARowWiseKernelKeepsItsWeightLoadAfterTheReductionUnlessTheSwitchAsks) {
  // A norm under its occupancy bound loads the weight row in its epilogue, after the reduction's
  // barrier; TESSERA_AB_ROWWISE_LOADS_FIRST=1 loads it with the input row, as Triton's RMSNorm.
  const ir::Function f = corpus_kernel("rmsnorm_f16");
  const auto weight_first = [&] {
    const std::string src = kernel_part(build(f, aligned_spec(f, kSm90a)).kernel.source);
    const size_t barrier = src.find("__syncthreads();"), weight = src.find("= load $w[");
    EXPECT_NE(barrier, std::string::npos) << src;
    EXPECT_NE(weight, std::string::npos) << src;
    return weight < barrier;
  };
  EXPECT_FALSE(weight_first());
  const ScopedEnv rowwise("TESSERA_AB_ROWWISE_LOADS_FIRST", "1");
  EXPECT_TRUE(weight_first());
}

TEST(LoadOrder, AMovedUnpaddedLoadReportsItsPlaceInTheIrTheHostDecodes) {
  // The host names the op of a GPU bounds error by its place in the IR it compiled
  // (runtime::op_sites: walk order); the kernel reports the index of m's load there, not the
  // load's place after the reorder.
  const ir::Function f = load_exchange_load(Pad::none());
  const size_t site = find(f.body, OpKind::Load, 2);
  ir::Function moved = f;
  ASSERT_TRUE(backend::cuda::issue_loads_first(moved));
  ASSERT_NE(find(moved.body, OpKind::Load, 2), site) << "the load must move for this test";
  const std::string src = kernel_part(build(f, aligned_spec(f, kSm90a)).kernel.source);
  const std::string want = "tsr_bounds(" + std::to_string(site) + ", ";
  size_t reports = 0;
  for (size_t at = src.find("tsr_bounds("); at != std::string::npos;
       at = src.find("tsr_bounds(", at + 1), ++reports)
    EXPECT_EQ(src.compare(at, want.size(), want), 0) << src.substr(at, 40);
  EXPECT_GT(reports, 0u) << src;
}

}  // namespace
}  // namespace tessera::test

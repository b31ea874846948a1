// The lowered form (lowered.hpp): the layout plan with layouts as types and conversions as ops,
// verified, printed, and what the emitter takes its conversions from.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "corpus.hpp"
#include "tessera/backend/cuda/layout.hpp"
#include "tessera/backend/cuda/lowered.hpp"
#include "tessera/backend/cuda/software_pipeline.hpp"
#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {
namespace {

// Every kernel of the corpus for sm_80 and sm_90a, aligned and not, with its plan.
template <class F>
void for_each_plan(F&& f) {
  for (const test::CorpusKernel& c : test::corpus()) {
    const ir::Function fn = test::prepared(c.make());
    for (const Arch arch : {test::kSm80, test::kSm90a})
      for (const bool aligned : {true, false}) {
        const KernelSpec spec =
            aligned ? test::aligned_spec(fn, arch) : test::unaligned_spec(fn, arch);
        f(c.name + " " + arch.str() + (aligned ? "" : " unaligned"), fn, plan_layouts(fn, spec));
      }
  }
}

// The first convert_layout of a block or its regions, and the block holding it.
std::pair<LoweredBlock*, size_t> first_conversion(LoweredBlock& b) {
  for (size_t i = 0; i < b.ops.size(); ++i) {
    if (!b.ops[i].op) return {&b, i};
    for (LoweredBlock& r : b.ops[i].regions)
      if (auto found = first_conversion(r); found.first) return found;
  }
  return {nullptr, 0};
}

// The emitter reads each operand's conversion from the lowered form instead of the plan's table:
// the same conversions, so the same code (the emitted corpus is unchanged).
TEST(LoweredForm, EveryKernelOfTheCorpusLowersVerifiesAndHoldsExactlyThePlansConversions) {
  int kernels = 0, conversions = 0;
  for_each_plan([&](const std::string& what, const ir::Function& fn, const LayoutPlan& plan) {
    const LoweredFunction lf = lower_layouts(fn, plan);
    EXPECT_NO_THROW(verify_lowered(lf)) << what;
    EXPECT_EQ(lf.converted.size(), plan.convert.size()) << what;
    for (const auto& [use, layout] : plan.convert) {
      const auto it = lf.converted.find(use);
      ASSERT_NE(it, lf.converted.end()) << what;
      EXPECT_EQ(lf.values.at(it->second).layout, layout) << what;
      EXPECT_EQ(lf.values.at(it->second).ir, use.first->operands.at(use.second)) << what;
    }
    // IR values keep their planned layouts; each conversion result is a value of its own.
    for (size_t v = 0; v < fn.values.size(); ++v) EXPECT_EQ(lf.values[v].layout, plan.of[v]);
    ++kernels;
    conversions += static_cast<int>(lf.values.size() - fn.values.size());
  });
  EXPECT_GT(kernels, 100);
  EXPECT_GT(conversions, 20);  // the corpus converts layouts in many kernels
}

TEST(LoweredForm, TheVerifierRejectsAUseInAnotherLayoutWithoutAConversion) {
  int rejected = 0;
  for_each_plan([&](const std::string& what, const ir::Function& fn, const LayoutPlan& plan) {
    LoweredFunction lf = lower_layouts(fn, plan);
    auto [block, at] = first_conversion(lf.body);
    if (!block || rejected > 0) return;
    // The conversion's readers now read the value in its own layout, without the op.
    const size_t made = block->ops[at].result, source = block->ops[at].source;
    block->ops.erase(block->ops.begin() + static_cast<std::ptrdiff_t>(at));
    std::function<void(LoweredBlock&)> rewire = [&](LoweredBlock& b) {
      for (LoweredOp& l : b.ops) {
        for (size_t& u : l.operands)
          if (u == made) u = source;
        for (LoweredBlock& r : l.regions) rewire(r);
      }
    };
    rewire(lf.body);
    try {
      verify_lowered(lf);
      ADD_FAILURE() << what << ": accepted a use without its conversion\n" << print_lowered(lf);
    } catch (const InternalError& e) {
      EXPECT_NE(std::string(e.what()).find("with no convert_layout between them"),
                std::string::npos)
          << e.what();
      ++rejected;
    }
  });
  EXPECT_EQ(rejected, 1);
}

TEST(LoweredForm, TheVerifierRejectsAConversionReadBeforeItIsMade) {
  int rejected = 0;
  for_each_plan([&](const std::string& what, const ir::Function& fn, const LayoutPlan& plan) {
    LoweredFunction lf = lower_layouts(fn, plan);
    auto [block, at] = first_conversion(lf.body);
    if (!block || rejected > 0) return;
    // Moved to the end of its block: after the op that reads it.
    LoweredOp convert = std::move(block->ops[at]);
    block->ops.erase(block->ops.begin() + static_cast<std::ptrdiff_t>(at));
    block->ops.push_back(std::move(convert));
    try {
      verify_lowered(lf);
      ADD_FAILURE() << what << ": accepted a conversion read before it is made";
    } catch (const InternalError& e) {
      EXPECT_NE(std::string(e.what()).find("a conversion not defined before it"), std::string::npos)
          << e.what();
      ++rejected;
    }
  });
  EXPECT_EQ(rejected, 1);
}

TEST(LoweredForm, ThePrintedFormGivesEachValueItsLayoutAndEachConversionALine) {
  bool printed = false;
  for_each_plan([&](const std::string& what, const ir::Function& fn, const LayoutPlan& plan) {
    const LoweredFunction lf = lower_layouts(fn, plan);
    if (printed || lf.converted.empty()) return;
    const std::string text = print_lowered(lf);
    EXPECT_EQ(text.rfind("kernel " + fn.name + "\n", 0), 0u) << what << "\n" << text;
    // "%cN = convert_layout %V: <from> -> <to>", for each conversion.
    size_t lines = 0;
    for (size_t at = text.find(" = convert_layout %"); at != std::string::npos;
         at = text.find(" = convert_layout %", at + 1))
      ++lines;
    EXPECT_EQ(lines, lf.values.size() - fn.values.size()) << text;
    EXPECT_NE(text.find(" -> "), std::string::npos) << text;
    EXPECT_NE(text.find("%c0"), std::string::npos) << text;
    printed = true;
  });
  EXPECT_TRUE(printed);
}

// ---- the software pipeline (software_pipeline.hpp) ----

// A GEMM of the corpus on `arch`, its lowered form and its pipelined loop.
struct Gemm {
  ir::Function fn;
  LayoutPlan plan;
  LoweredFunction lowered;
};
Gemm gemm(const char* name, const Arch& arch) {
  Gemm g{test::corpus_kernel(name), {}, {}};
  g.plan = plan_layouts(g.fn, test::aligned_spec(g.fn, arch));
  g.lowered = lower_layouts(g.fn, g.plan);
  return g;
}

LoweredBlock& loop_body(LoweredFunction& lf) {
  for (LoweredOp& l : lf.body.ops)
    if (l.op == lf.pipeline->loop) return l.regions.at(0);
  throw std::logic_error("no pipelined loop");
}

// The index in b of the first op of `kind` on `buffer` (and, for a barrier, `barrier`).
size_t find(const LoweredBlock& b, LoweredKind kind, size_t buffer,
            Barrier barrier = Barrier::Full) {
  for (size_t i = 0; i < b.ops.size(); ++i) {
    const LoweredOp& l = b.ops[i];
    if (l.kind == kind && l.buffer == buffer &&
        (kind == LoweredKind::AsyncCopy || l.barrier == barrier))
      return i;
  }
  return SIZE_MAX;
}
size_t find_ir(const LoweredBlock& b, const ir::Op* op) {
  for (size_t i = 0; i < b.ops.size(); ++i)
    if (b.ops[i].op == op) return i;
  return SIZE_MAX;
}

// Moves b.ops[from] to just before b.ops[to] (to may be b.ops.size()).
void move_op(LoweredBlock& b, size_t from, size_t to) {
  LoweredOp l = std::move(b.ops[from]);
  b.ops.erase(b.ops.begin() + static_cast<std::ptrdiff_t>(from));
  if (to > from) --to;
  b.ops.insert(b.ops.begin() + static_cast<std::ptrdiff_t>(to), std::move(l));
}

std::string rejection(const LoweredFunction& lf) {
  try {
    verify_lowered(lf);
  } catch (const InternalError& e) {
    return e.what();
  }
  return "accepted:\n" + print_lowered(lf);
}

TEST(SoftwarePipeline, AGemmLoopsLoadsBecomeCopiesAheadOfTheirReadersIntoARing) {
  for (const Arch arch : {test::kSm90a, test::kSm80}) {
    Gemm g = gemm("gemm_f16_128x256x64", arch);
    ASSERT_TRUE(g.plan.pipeline) << arch.str();
    const MmaPipeline& p = *g.plan.pipeline;
    LoweredFunction lf = software_pipeline(g.lowered, mma_ring(p, 4));
    EXPECT_NO_THROW(verify_lowered(lf)) << print_lowered(lf);
    // Before the loop: the copies of iterations 0, 1 and 2, A and B each.
    const size_t at_loop = find_ir(lf.body, p.loop);
    std::vector<std::pair<size_t, int>> before;
    for (size_t i = 0; i < at_loop; ++i)
      if (lf.body.ops[i].kind == LoweredKind::AsyncCopy)
        before.emplace_back(lf.body.ops[i].buffer, lf.body.ops[i].ahead);
    EXPECT_EQ(before, (std::vector<std::pair<size_t, int>>{
                          {0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}}));
    // In the body: no load; each buffer's slot it+3 refilled after its empty wait, this
    // iteration's slot waited on before the mma and released after it.
    LoweredBlock& body = loop_body(lf);
    EXPECT_EQ(find_ir(body, p.load_a), SIZE_MAX);
    EXPECT_EQ(find_ir(body, p.load_b), SIZE_MAX);
    const size_t mma = find_ir(body, p.mma);
    for (size_t b = 0; b < 2; ++b) {
      const size_t empty = find(body, LoweredKind::BarrierWait, b, Barrier::Empty);
      const size_t copy = find(body, LoweredKind::AsyncCopy, b);
      const size_t full = find(body, LoweredKind::BarrierWait, b, Barrier::Full);
      const size_t arrive = find(body, LoweredKind::BarrierArrive, b, Barrier::Empty);
      ASSERT_NE(arrive, SIZE_MAX);
      EXPECT_LT(empty, copy);
      EXPECT_EQ(body.ops[copy].ahead, 3);
      EXPECT_EQ(body.ops[empty].ahead, 3);
      EXPECT_LT(full, mma);
      EXPECT_EQ(body.ops[full].ahead, 0);
      EXPECT_GT(arrive, mma);
    }
    EXPECT_EQ(lf.pipeline->buffers[1].offset, p.a_bytes());
    EXPECT_EQ(lf.pipeline->stage_bytes, p.stage_bytes());
    const std::string text = print_lowered(lf);
    EXPECT_NE(text.find("pipeline: 4 stages of " + std::to_string(p.stage_bytes()) + " bytes"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(" = async_copy -> ring[0] slot it+3\n"), std::string::npos) << text;
    EXPECT_NE(text.find(" = async_copy -> ring[1] slot 2 (iteration 2)\n"), std::string::npos)
        << text;
    EXPECT_NE(text.find("barrier_wait empty ring[1] slot it+3\n"), std::string::npos) << text;
    EXPECT_NE(text.find("barrier_arrive empty ring[0] slot it+0\n"), std::string::npos) << text;
  }
}

TEST(SoftwarePipeline, EveryPipelinedGemmOfTheCorpusVerifiesWithTwoToFourStages) {
  int pipelined = 0;
  for_each_plan([&](const std::string& what, const ir::Function& fn, const LayoutPlan& plan) {
    if (!plan.pipeline) return;
    for (int stages = 2; stages <= 4; ++stages)
      EXPECT_NO_THROW(verify_lowered(
          software_pipeline(lower_layouts(fn, plan), mma_ring(*plan.pipeline, stages))))
          << what;
    ++pipelined;
  });
  EXPECT_GE(pipelined, 6);
}

// The emitters take the ring from the pass: the stage count the kernel's comment and its barrier
// arrays name is the one in the pipelined lowered form (TESSERA_DUMP=layouts).
TEST(SoftwarePipeline, TheEmittedGemmUsesTheRingOfItsPipelinedLoweredForm) {
  for (const Arch arch : {test::kSm90a, test::kSm80}) {
    const ir::Function fn = test::corpus_kernel("gemm_bf16_epilogue");
    const EmittedKernel k = emit(fn, test::aligned_spec(fn, arch));
    const size_t at = k.layouts.find("pipeline: ");
    ASSERT_NE(at, std::string::npos) << k.layouts;
    const int stages = std::stoi(k.layouts.substr(at + 10));
    EXPECT_GE(stages, 2);
    EXPECT_NE(k.source.find(std::to_string(stages) +
                            (arch.major == 9 ? " stages of " : " cp.async stages of ")),
              std::string::npos)
        << arch.str();
    EXPECT_NE(k.layouts.find("async_copy"), std::string::npos);
  }
}

TEST(SoftwarePipeline, TheVerifierRejectsAReadOfASlotBeforeItsWait) {
  Gemm g = gemm("gemm_f16_128x256x64", test::kSm90a);
  LoweredFunction lf = software_pipeline(g.lowered, mma_ring(*g.plan.pipeline, 3));
  LoweredBlock& body = loop_body(lf);
  // A's full wait after the mma that reads A.
  move_op(body, find(body, LoweredKind::BarrierWait, 0, Barrier::Full),
          find_ir(body, g.plan.pipeline->mma) + 1);
  const std::string why = rejection(lf);
  EXPECT_NE(why.find("ring buffer 0"), std::string::npos) << why;
  EXPECT_NE(why.find("is read by mma before a barrier_wait full on its slot"), std::string::npos)
      << why;
}

TEST(SoftwarePipeline, TheVerifierRejectsAReadAfterItsSlotIsReleased) {
  Gemm g = gemm("gemm_f16_128x256x64", test::kSm80);
  LoweredFunction lf = software_pipeline(g.lowered, mma_ring(*g.plan.pipeline, 3));
  LoweredBlock& body = loop_body(lf);
  move_op(body, find(body, LoweredKind::BarrierArrive, 1, Barrier::Empty),
          find_ir(body, g.plan.pipeline->mma));
  const std::string why = rejection(lf);
  EXPECT_NE(why.find("after barrier_arrive empty released its slot"), std::string::npos) << why;
}

TEST(SoftwarePipeline, TheVerifierRejectsASlotOverwrittenTooEarly) {
  Gemm g = gemm("gemm_f16_128x256x64", test::kSm90a);
  const MmaPipeline& p = *g.plan.pipeline;
  {  // The refill of B's slot before the wait that says its readers are done with it.
    LoweredFunction lf = software_pipeline(g.lowered, mma_ring(p, 3));
    LoweredBlock& body = loop_body(lf);
    move_op(body, find(body, LoweredKind::BarrierWait, 1, Barrier::Empty),
            find(body, LoweredKind::AsyncCopy, 1) + 1);
    const std::string why = rejection(lf);
    EXPECT_NE(why.find("ring buffer 1"), std::string::npos) << why;
    EXPECT_NE(why.find("before a barrier_wait empty on it"), std::string::npos) << why;
  }
  {  // A copy as many iterations ahead as the ring has stages: into the slot this iteration reads.
    LoweredFunction lf = software_pipeline(g.lowered, mma_ring(p, 3));
    LoweredBlock& body = loop_body(lf);
    for (LoweredOp& l : body.ops)
      if (l.buffer == 0 && l.ahead == 2 && l.kind != LoweredKind::Ir) l.ahead = 3;
    const std::string why = rejection(lf);
    EXPECT_NE(why.find("a slot overwritten too early"), std::string::npos) << why;
  }
  {  // The prologue one copy short: iteration 1's tile is never copied.
    LoweredFunction lf = software_pipeline(g.lowered, mma_ring(p, 3));
    lf.body.ops.erase(lf.body.ops.begin() +
                      static_cast<std::ptrdiff_t>(find_ir(lf.body, p.loop) - 1));
    const std::string why = rejection(lf);
    EXPECT_NE(why.find("holds no copy of iteration 1's tile"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace tessera::backend::cuda

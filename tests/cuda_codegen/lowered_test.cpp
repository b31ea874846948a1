// The lowered form (lowered.hpp): the layout plan with layouts as types and conversions as ops,
// verified, printed, and what the emitter takes its conversions from.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>

#include "corpus.hpp"
#include "tessera/backend/cuda/layout.hpp"
#include "tessera/backend/cuda/lowered.hpp"
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

}  // namespace
}  // namespace tessera::backend::cuda

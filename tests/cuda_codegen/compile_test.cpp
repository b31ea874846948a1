// Every corpus kernel emitted and compiled by NVRTC for sm_80 and sm_90a, with 16-byte aligned
// tensors (rows of whole vectors, as contiguous tensors have, or not, as column slices have) and
// with tensors that allow no vector access. Compile-only: no GPU is needed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <regex>

#include "tessera/backend/cuda/launch.hpp"

#include "corpus.hpp"
#include "grid_dependency_check.hpp"
#include "runtime/scoped_env.hpp"

namespace tessera::test {
namespace {

struct Target {
  const char* name;
  backend::cuda::Arch arch;
  enum class Alignment { none, vectors, whole_rows } alignment;
};
// What gtest prints for the parameter (a failure, --gtest_list_tests): the name, not a byte dump
// of the struct, which also held a pointer that changes from build to build.
void PrintTo(const Target& t, std::ostream* os) {
  *os << t.name;
}

// Each kernel and target is emitted and compiled once for all the tests below.
const Built& built(const std::string& name, const Target& target) {
  static std::map<std::string, Built> cache;
  const std::string key = name + "/" + target.name;
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  const ir::Function f = corpus_kernel(name);
  using enum Target::Alignment;
  const backend::cuda::KernelSpec spec = target.alignment == none ? unaligned_spec(f, target.arch)
                                         : target.alignment == vectors
                                             ? aligned_spec(f, target.arch)
                                             : contiguous_spec(f, target.arch);
  return cache.emplace(key, build(f, spec)).first->second;
}

class CorpusCompiles : public ::testing::TestWithParam<std::tuple<std::string, Target>> {};

TEST_P(CorpusCompiles, ForTheArchitectureAndAlignment) {
  const auto& [name, target] = GetParam();
  const Built& b = built(name, target);
  EXPECT_FALSE(b.compiled.cubin.empty()) << kernel_part(b.kernel.source);
  EXPECT_NE(b.compiled.ptx.find(".entry " + b.kernel.entry), std::string::npos)
      << "the entry point is not " << b.kernel.entry;
}

// Programmatic dependent launch: on sm_90a every kernel kind waits for the grids before it on the
// stream before its first global access (read from the PTX NVRTC made); sm_80 code has no
// griddepcontrol at all (the instruction is sm_90+) and is launched plainly.
TEST_P(CorpusCompiles, WaitsForTheGridsBeforeItBeforeItsFirstGlobalAccessOnlyOnSm90) {
  const auto& [name, target] = GetParam();
  const Built& b = built(name, target);
  if (target.arch.major >= 9) {
    EXPECT_TRUE(b.kernel.waits_for_prior_grids);
    EXPECT_EQ(grid_dependency_violation(b.compiled.ptx, b.kernel.entry), "")
        << "PTX before the wait:\n"
        << before_wait(b.compiled.ptx, b.kernel.entry) << "\n"
        << kernel_part(b.kernel.source);
  } else {
    EXPECT_FALSE(b.kernel.waits_for_prior_grids);
    EXPECT_EQ(b.compiled.ptx.find("griddepcontrol"), std::string::npos);
    EXPECT_EQ(kernel_part(b.kernel.source).find("tsr_wait_prior_grids"), std::string::npos);
  }
}

// The corpus above reaches the general lowering and the TMA/wgmma pipeline on sm_90a (the
// attention lowering has its own test, attention_pipeline_test.cpp), so the test above covers
// each kind's prologue.
TEST(GridDependency, TheCorpusReachesTheGeneralAndThePipelinedKernelOnSm90a) {
  const Target sm90a{"sm90a_aligned", kSm90a, Target::Alignment::vectors};
  // Copies, not references: g++ 13 takes a reference bound to a function of a temporary string
  // for a dangling one (-Wdangling-reference), though the cache outlives the test.
  const Built pipelined = built("gemm_f16_128x256x64", sm90a);
  EXPECT_NE(pipelined.kernel.source.find("producer warp (TMA)"), std::string::npos);
  EXPECT_EQ(grid_dependency_violation(pipelined.compiled.ptx, pipelined.kernel.entry), "");
  const Built general = built("add_f32", sm90a);
  EXPECT_EQ(general.kernel.source.find("A pipelined mma loop"), std::string::npos);
  EXPECT_EQ(grid_dependency_violation(general.compiled.ptx, general.kernel.entry), "");
}

// TESSERA_PDL=0 (KernelSpec::grid_dependency_control off): the sm_90a code has no griddepcontrol,
// so it is launched plainly and lets no kernel after it start early.
TEST(GridDependency, TurnedOffTheSm90aCodeHasNoGridDependencyControl) {
  for (const char* name : {"add_f32", "gemm_f16_128x256x64"}) {
    const ir::Function f = corpus_kernel(name);
    backend::cuda::KernelSpec spec = aligned_spec(f, kSm90a);
    spec.grid_dependency_control = false;
    const Built b = build(f, spec);
    EXPECT_FALSE(b.kernel.waits_for_prior_grids) << name;
    EXPECT_EQ(b.compiled.ptx.find("griddepcontrol"), std::string::npos) << name;
  }
}

// The prefetch op on sm_90a: thread 0 of each block issues its slice of the tensor (each tensor
// once, however often the kernel names it) before the wait, with the span cap, in the general
// lowering and in the TMA/wgmma pipeline; the PTX has the bulk L2 prefetch before
// griddepcontrol.wait, and the wait rule holds.
TEST(Prefetch, ThreadZeroIssuesEachTensorsSliceBeforeTheWaitOnSm90a) {
  const Target sm90a{"sm90a_aligned", kSm90a, Target::Alignment::vectors};
  for (const char* kernel : {"matvec_prefetch", "gemm_f16_prefetch"}) {
    const std::string name = kernel;  // named: g++ 13 flags a reference built from a temporary
    const Built& b = built(name, sm90a);
    const std::string code = kernel_part(b.kernel.source);
    const std::string call =
        "tsr_prefetch_l2_share(p2_" + std::string(name[0] == 'm' ? "w" : "b") + ", 2, 33554432LL);";
    static const std::regex block(
        R"(\n *// Before the wait: thread 0 warms L2[^\n]*\n *tsr_prefetch_l2_share\()");
    EXPECT_TRUE(std::regex_search(code, block)) << name << "\n" << code;
    const size_t at = code.find(call), wait = code.find("tsr_wait_prior_grids();");
    ASSERT_NE(at, std::string::npos) << name << "\n" << code;
    ASSERT_NE(wait, std::string::npos) << name;
    EXPECT_LT(at, wait) << name;
    EXPECT_EQ(code.find("tsr_prefetch_l2_share(", at + 1), std::string::npos)
        << name << ": each tensor once";
    const size_t ptx_at = b.compiled.ptx.find("cp.async.bulk.prefetch.L2.global");
    ASSERT_NE(ptx_at, std::string::npos) << name;
    // Predicated (on thread 0 and a non-empty slice), not branched around: no branch before the
    // wait that the PTX rule would have to follow.
    EXPECT_EQ(b.compiled.ptx.substr(ptx_at - 3, 3), "@p ") << name;
    EXPECT_LT(ptx_at, b.compiled.ptx.find("griddepcontrol.wait")) << name;
    EXPECT_EQ(grid_dependency_violation(b.compiled.ptx, b.kernel.entry), "")
        << name << ": PTX before the wait:\n"
        << before_wait(b.compiled.ptx, b.kernel.entry);
  }
  // The pipelined GEMM is still pipelined with a prefetch in its body.
  EXPECT_NE(built("gemm_f16_prefetch", sm90a).kernel.source.find("producer warp (TMA)"),
            std::string::npos);
}

// No prefetch where there is no wait to fill (sm_80, TESSERA_PDL=0) or under the A/B switch
// (TESSERA_AB_PREFETCH=0, KernelSpec::l2_prefetch); the kernel is otherwise the same.
TEST(Prefetch, NothingOnSm80WithoutGridDependencyControlOrSwitchedOff) {
  const ir::Function f = corpus_kernel("matvec_prefetch");
  const Built sm80 = build(f, aligned_spec(f, kSm80));
  EXPECT_EQ(kernel_part(sm80.kernel.source).find("tsr_prefetch_l2_share("), std::string::npos);
  EXPECT_EQ(sm80.compiled.ptx.find("cp.async.bulk.prefetch"), std::string::npos);
  backend::cuda::KernelSpec no_pdl = aligned_spec(f, kSm90a);
  no_pdl.grid_dependency_control = false;
  const Built without_pdl = build(f, no_pdl);
  EXPECT_EQ(kernel_part(without_pdl.kernel.source).find("tsr_prefetch_l2_share("),
            std::string::npos);
  EXPECT_EQ(without_pdl.compiled.ptx.find("cp.async.bulk.prefetch"), std::string::npos);
  backend::cuda::KernelSpec off = aligned_spec(f, kSm90a);
  off.l2_prefetch = false;
  const Built switched_off = build(f, off);
  const std::string code = kernel_part(switched_off.kernel.source);
  EXPECT_EQ(code.find("tsr_prefetch_l2_share("), std::string::npos);
  EXPECT_NE(code.find("tsr_wait_prior_grids();"), std::string::npos);
  EXPECT_EQ(switched_off.compiled.ptx.find("cp.async.bulk.prefetch"), std::string::npos);
  // Apart from the prefetch lines, the code is the one emitted with the switch on.
  std::string on = kernel_part(build(f, aligned_spec(f, kSm90a)).kernel.source);
  const size_t from = on.find("  // Before the wait: thread 0");
  ASSERT_NE(from, std::string::npos);
  on.erase(from, on.find("  tsr_wait_prior_grids", from) - from);
  EXPECT_EQ(on, code);
}

// TESSERA_AB_PREFETCH: 0 or 1 or unset; anything else says what to set.
TEST(Prefetch, TheAbSwitchReadsTheEnvironment) {
  ::unsetenv("TESSERA_AB_PREFETCH");
  EXPECT_TRUE(backend::cuda::l2_prefetch_enabled());  // on by default since its decode A/B
  ::setenv("TESSERA_AB_PREFETCH", "0", 1);
  EXPECT_FALSE(backend::cuda::l2_prefetch_enabled());
  ::setenv("TESSERA_AB_PREFETCH", "1", 1);
  EXPECT_TRUE(backend::cuda::l2_prefetch_enabled());
  ::setenv("TESSERA_AB_PREFETCH", "yes", 1);
  try {
    (void)backend::cuda::l2_prefetch_enabled();
    ADD_FAILURE() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("TESSERA_AB_PREFETCH is 'yes'; set it to 0"),
              std::string::npos)
        << e.what();
  }
  ::unsetenv("TESSERA_AB_PREFETCH");
}

std::vector<std::string> corpus_names() {
  std::vector<std::string> names;
  for (const CorpusKernel& k : corpus()) names.push_back(k.name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    Nvrtc, CorpusCompiles,
    ::testing::Combine(
        ::testing::ValuesIn(corpus_names()),
        ::testing::Values(Target{"sm80_aligned", kSm80, Target::Alignment::vectors},
                          Target{"sm80_unaligned", kSm80, Target::Alignment::none},
                          Target{"sm90a_aligned", kSm90a, Target::Alignment::vectors},
                          Target{"sm90a_contiguous", kSm90a, Target::Alignment::whole_rows},
                          Target{"sm90a_unaligned", kSm90a, Target::Alignment::none})),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

}  // namespace
}  // namespace tessera::test

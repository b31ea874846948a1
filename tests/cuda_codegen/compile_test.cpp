// Every corpus kernel emitted and compiled by NVRTC for sm_80 and sm_90a, with 16-byte aligned
// tensors (rows of whole vectors, as contiguous tensors have, or not, as column slices have) and
// with tensors that allow no vector access. Compile-only: no GPU is needed.
#include <gtest/gtest.h>

#include <map>

#include "corpus.hpp"
#include "grid_dependency_check.hpp"

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
  const Built& pipelined = built("gemm_f16_128x256x64", sm90a);
  EXPECT_NE(pipelined.kernel.source.find("producer warp (TMA)"), std::string::npos);
  EXPECT_EQ(grid_dependency_violation(pipelined.compiled.ptx, pipelined.kernel.entry), "");
  const Built& general = built("add_f32", sm90a);
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

// Every corpus kernel emitted and compiled by NVRTC for sm_80 and sm_90a, with 16-byte aligned
// tensors (rows of whole vectors, as contiguous tensors have, or not, as column slices have) and
// with tensors that allow no vector access. Compile-only: no GPU is needed.
#include <gtest/gtest.h>

#include "corpus.hpp"

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

class CorpusCompiles : public ::testing::TestWithParam<std::tuple<std::string, Target>> {};

TEST_P(CorpusCompiles, ForTheArchitectureAndAlignment) {
  const auto& [name, target] = GetParam();
  const ir::Function f = corpus_kernel(name);
  using enum Target::Alignment;
  const backend::cuda::KernelSpec spec = target.alignment == none ? unaligned_spec(f, target.arch)
                                         : target.alignment == vectors
                                             ? aligned_spec(f, target.arch)
                                             : contiguous_spec(f, target.arch);
  const Built b = build(f, spec);
  EXPECT_FALSE(b.compiled.cubin.empty()) << kernel_part(b.kernel.source);
  EXPECT_NE(b.compiled.ptx.find(".entry " + b.kernel.entry), std::string::npos)
      << "the entry point is not " << b.kernel.entry;
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

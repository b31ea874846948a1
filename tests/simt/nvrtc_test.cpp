// SIMT kernels through NVRTC, compile only (no GPU): the translation unit Module::nvrtc builds
// compiles for sm_80 and sm_90a, and a body that does not match the host's declaration does not.
#include <gtest/gtest.h>

#include <string>

#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/core/error.hpp"
#include "tessera/simt/module.hpp"
#include "test_kernels.hpp"

namespace tessera::simt {
namespace {

namespace cuda = backend::cuda;

std::string kernel_source() {
  return kTestKernelsSource;
}

std::string all_kernels_unit() {
  return nvrtc_translation_unit<SIMT_TEST_KERNELS>(kernel_source(), "test_kernels.cuh");
}

class SimtNvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda::nvrtc_available(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  }
};

TEST_F(SimtNvrtc, TestKernelsCompileForAmpereAndHopper) {
  const std::string unit = all_kernels_unit();
  for (const cuda::Arch arch : {cuda::Arch{8, 0, false}, cuda::Arch{9, 0, true}}) {
    const cuda::CompiledCuda c = cuda::compile_cuda(unit, "test_kernels.cuh", arch, {"-std=c++20"});
    EXPECT_FALSE(c.cubin.empty()) << arch.str();
    // Every kernel's entry is there, with its launch bound from the contract.
    EXPECT_NE(c.ptx.find(".entry tessera_simt_t_add("), std::string::npos) << arch.str();
    EXPECT_NE(c.ptx.find(".entry tessera_simt_t_raw_copy("), std::string::npos) << arch.str();
    EXPECT_NE(c.ptx.find(".maxntid 256, 1, 1"), std::string::npos) << arch.str();
  }
}

TEST_F(SimtNvrtc, ABodyThatDoesNotMatchTheHostDeclarationDoesNotCompile) {
  // t_add's host declaration has four parameters; this body forgets y.
  const std::string unit = nvrtc_translation_unit<t_add>(
      "using namespace tessera::simt;\n"
      "TESSERA_SIMT_DEFINE(t_add, Index1D i, DisjointSpan<float> out, Span<const float> x) {\n"
      "  if (auto o = out.at(i)) *o = x[i];\n"
      "}\n",
      "forgot_y.cu");
  try {
    (void)cuda::compile_cuda(unit, "forgot_y.cu", cuda::Arch{9, 0, true}, {"-std=c++20"});
    FAIL() << "a body whose parameters differ from the declaration compiled";
  } catch (const BackendError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("forgot_y.cu(2)"), std::string::npos) << what;
    EXPECT_NE(what.find("t_add::body"), std::string::npos) << what;
    EXPECT_NE(what.find("declared at line 5 of tessera-simt-declarations"), std::string::npos)
        << what;
  }
}

TEST_F(SimtNvrtc, CheckedKernelRulesHoldUnderNvrtcToo) {
  // The device API's own checks run in NVRTC as in the host compiler: an Index2D used as a tile
  // witness is a compile error with the same message.
  const std::string unit = nvrtc_translation_unit<t_scale2d>(
      "using namespace tessera::simt;\n"
      "TESSERA_SIMT_DEFINE(t_scale2d, Index2D w, DisjointSpan2D<float> out,\n"
      "                    Span2D<const float> a, float s) {\n"
      "  if (auto o = out.at(w, 0, 1)) *o = s * a(w.row(), w.col());\n"
      "}\n",
      "mixed.cu");
  try {
    (void)cuda::compile_cuda(unit, "mixed.cu", cuda::Arch{8, 0, false}, {"-std=c++20"});
    FAIL() << "an Index2D was taken for a tile witness";
  } catch (const BackendError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("DisjointSpan2D<T>::at() takes the thread's Index2D, or its TileIndex2D"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("mixed.cu(4)"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace tessera::simt

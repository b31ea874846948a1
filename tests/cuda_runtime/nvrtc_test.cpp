// compile_cuda through NVRTC, compile-only (no GPU): the architectures CI builds for (sm_80 and
// sm_90a), the options Tessera chooses, and errors that carry NVRTC's log.
#include <gtest/gtest.h>

#include "tessera/backend/cuda/abi_source.hpp"
#include "tessera/backend/cuda/device.hpp"
#include "tessera/backend/cuda/nvrtc.hpp"
#include "tessera/backend/cuda/nvrtc_info.hpp"
#include "tessera/core/error.hpp"

using namespace tessera;
using namespace tessera::backend::cuda;

namespace {

const Arch kSm80{8, 0, false};
const Arch kSm90a{9, 0, true};

// Every test needs NVRTC; a machine without it skips them, saying why.
class Nvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!nvrtc_available(&why)) GTEST_SKIP() << why;
  }
};

// y = a * x + y through the ABI: what generated kernels look like from outside.
std::string axpy_source() {
  return std::string(abi_source()) + R"(
extern "C" __global__ void axpy(TesseraGrid grid, TesseraTensorRef y, TesseraTensorRef x, float a) {
  for (tessera_i64 b = blockIdx.x; b < grid.total; b += gridDim.x) {
    tessera_i64 i = b * blockDim.x + threadIdx.x;
    if (i < y.shape[0])
      ((float*)y.data)[i * y.strides[0]] += a * ((const float*)x.data)[i * x.strides[0]];
  }
}
)";
}

bool is_elf(const std::vector<char>& image) {
  return image.size() > 4 && image[0] == 0x7f && image[1] == 'E' && image[2] == 'L' &&
         image[3] == 'F';
}

TEST(ArchName, IsSmMajorMinorWithTheSpecificSuffix) {
  EXPECT_EQ(kSm80.str(), "sm_80");
  EXPECT_EQ(kSm90a.str(), "sm_90a");
  EXPECT_EQ((Arch{8, 6, false}.str()), "sm_86");
}

TEST(ArchName, ParsesWhatStrPrintsAndRefusesTheRest) {
  for (const Arch a : {kSm80, kSm90a, Arch{8, 6, false}}) EXPECT_EQ(parse_arch(a.str(), "X"), a);
  for (const char* bad : {"sm_8", "sm80", "compute_80", "sm_90b", "sm_9a", "", "sm_800"}) {
    try {
      (void)parse_arch(bad, "TESSERA_TARGET_ARCH");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("TESSERA_TARGET_ARCH: '" + std::string(bad) +
                                           "' is not an architecture like sm_80 or sm_90a"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(ArchName, DevicesFromHopperOnGetTheirSpecificArch) {
  EXPECT_EQ(exact_arch(8, 0).str(), "sm_80");
  EXPECT_EQ(exact_arch(8, 9).str(), "sm_89");
  EXPECT_EQ(exact_arch(9, 0).str(), "sm_90a");
  EXPECT_EQ(exact_arch(10, 0).str(), "sm_100a");
}

TEST_F(Nvrtc, VersionIsTwelveOrNewerAndCompilesForTheCiArchitectures) {
  EXPECT_GE(nvrtc_version(), 12000);
  EXPECT_FALSE(nvrtc_library().empty());
  std::string why;
  EXPECT_TRUE(nvrtc_supports(kSm80, &why)) << why;
  EXPECT_TRUE(nvrtc_supports(kSm90a, &why)) << why;
  EXPECT_FALSE(nvrtc_supports(Arch{5, 2, false}, &why));
  EXPECT_NE(why.find("cannot compile for sm_52"), std::string::npos) << why;
}

TEST_F(Nvrtc, CompilesTheAbiKernelForSm80) {
  const CompiledCuda c = compile_cuda(axpy_source(), "axpy.cu", kSm80);
  EXPECT_TRUE(is_elf(c.cubin));
  EXPECT_NE(c.ptx.find(".target sm_80"), std::string::npos);
  EXPECT_NE(c.ptx.find(".entry axpy("), std::string::npos);
}

TEST_F(Nvrtc, CompilesTheAbiKernelForSm90a) {
  const CompiledCuda c = compile_cuda(axpy_source(), "axpy.cu", kSm90a);
  EXPECT_TRUE(is_elf(c.cubin));
  EXPECT_NE(c.ptx.find(".target sm_90a"), std::string::npos);
}

TEST_F(Nvrtc, Sm90aAcceptsHopperOnlyInstructions) {
  // setmaxnreg exists only on sm_90a: the specific suffix reaches ptxas.
  const std::string source = R"(
extern "C" __global__ void k() { asm volatile("setmaxnreg.inc.sync.aligned.u32 240;"); }
)";
  EXPECT_NO_THROW(compile_cuda(source, "hopper.cu", kSm90a));
  EXPECT_THROW(compile_cuda(source, "hopper.cu", Arch{9, 0, false}), BackendError);
}

TEST_F(Nvrtc, FastMathIsOffByDefault) {
  const std::string source = R"(
extern "C" __global__ void div(float* out, float a, float b) { *out = a / b; }
)";
  // IEEE division unless asked otherwise, so that results match the CPU backend.
  EXPECT_NE(compile_cuda(source, "div.cu", kSm80).ptx.find("div.rn.f32"), std::string::npos);
  EXPECT_EQ(compile_cuda(source, "div.cu", kSm80, {"--use_fast_math"}).ptx.find("div.rn.f32"),
            std::string::npos);
}

TEST_F(Nvrtc, ExtraOptionsReachTheCompiler) {
  const std::string source = R"(
#if TESSERA_TEST_VALUE != 7
#error "TESSERA_TEST_VALUE is not 7"
#endif
extern "C" __global__ void k() {}
)";
  EXPECT_NO_THROW(compile_cuda(source, "defined.cu", kSm80, {"-DTESSERA_TEST_VALUE=7"}));
  EXPECT_THROW(compile_cuda(source, "defined.cu", kSm80), BackendError);
}

TEST_F(Nvrtc, BadSourceIsABackendErrorCarryingTheLog) {
  const std::string source = R"(
extern "C" __global__ void broken(float* p) { p[0] = undefined_thing; }
)";
  try {
    compile_cuda(source, "broken_kernel.cu", kSm80);
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("NVRTC could not compile broken_kernel.cu for sm_80"), std::string::npos) << m;
    // The log, with the file name, the line and NVRTC's words.
    EXPECT_NE(m.find("broken_kernel.cu(2)"), std::string::npos) << m;
    EXPECT_NE(m.find("identifier \"undefined_thing\" is undefined"), std::string::npos) << m;
  }
}

TEST_F(Nvrtc, VirtualArchitectureIsRefusedForWantOfACubin) {
  try {
    compile_cuda(axpy_source(), "axpy.cu", kSm80, {"--gpu-architecture=compute_80"});
    FAIL() << "expected a BackendError";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("produced no cubin"), std::string::npos) << e.what();
  }
}

TEST_F(Nvrtc, ToolkitHeadersAreOfferedToHandWrittenKernels) {
  if (cuda_include_dir().empty()) GTEST_SKIP() << "no CUDA toolkit headers on this machine";
  const std::string source = R"(
#include <cuda_fp16.h>
extern "C" __global__ void h(__half* p) { p[threadIdx.x] = __float2half(1.0f); }
)";
  EXPECT_NO_THROW(compile_cuda(source, "fp16.cu", kSm80));
}

}  // namespace

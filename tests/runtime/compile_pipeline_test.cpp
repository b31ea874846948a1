// The compile pipeline (compile_pipeline.hpp, compile.hpp): TESSERA_LOG=compile prints each stage
// of each kernel compiled with its time, once per specialization; TESSERA_DUMP names every stage
// and writes what each made (NVRTC runs here for sm_80/sm_90a through TESSERA_NVRTC_CHECK).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <tessera/backend/cuda/nvrtc.hpp>
#include <tessera/runtime/compile.hpp>
#include <tessera/tessera.hpp>

#include "scoped_env.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;
namespace fs = std::filesystem;

TESSERA_KERNEL(logged_scale, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
TESSERA_KERNEL(unlogged_scale, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 3.0f);
};
TESSERA_KERNEL(checked_colsum, Out<float, 2> z, In<float, 2> x) {
  const Tile<float> t = load(x, {0, tile_index(1)}, {32, 32});
  z.store(sum(t, 0));
};
TESSERA_KERNEL(dumped_colsum, Out<float, 2> z, In<float, 2> x) {
  const Tile<float> t = load(x, {0, tile_index(1)}, {32, 32});
  // argmax along the column goes through shared memory (the column sum alone stays in one
  // warp's registers and shuffles): the dump then has a shared-memory plan to show.
  z.store(sum(t, 0) + argmax(t, 0).cast<float>());
};

// The stages of `kernel`'s "tessera compile:" lines, in order; every line must have the format.
std::vector<std::string> stages(const std::string& err, const std::string& kernel) {
  std::vector<std::string> out;
  const std::regex line("tessera compile: " + kernel + ": (.+) [0-9]+\\.[0-9]{3} ms( \\(.*\\))?");
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);) {
    if (l.rfind("tessera compile: " + kernel + ": ", 0) != 0) continue;
    std::smatch m;
    EXPECT_TRUE(std::regex_match(l, m, line)) << l;
    if (!m.empty()) out.push_back(m[1].str() + m[2].str());
  }
  return out;
}

bool nvrtc_here(std::string* why) {
  return backend::cuda::nvrtc_available(why);
}

TEST(CompileLog, EachStageOfAKernelCompiledIsTimedOnce) {
  const ScopedEnv log("TESSERA_LOG", "compile");
  const ScopedEnv check("TESSERA_NVRTC_CHECK", "");
  auto x = ones<float>({256}, Device::cpu());
  testing::internal::CaptureStderr();
  (void)logged_scale(zeros<float>({256}, Device::cpu()).partition({64}), x).sync();
  (void)logged_scale(zeros<float>({256}, Device::cpu()).partition({64}), x).sync();  // cached
  const std::string err = testing::internal::GetCapturedStderr();
  const std::vector<std::string> want = {"trace",           "verify",       "promote_locals",
                                         "canonical_order", "check_safety", "dce",
                                         "total (on cpu)"};
  EXPECT_EQ(stages(err, "logged_scale"), want) << err;
}

TEST(CompileLog, SaysNothingWithoutTheSwitch) {
  const ScopedEnv log("TESSERA_LOG", "jit");
  const ScopedEnv check("TESSERA_NVRTC_CHECK", "");
  auto x = ones<float>({256}, Device::cpu());
  testing::internal::CaptureStderr();
  (void)unlogged_scale(zeros<float>({256}, Device::cpu()).partition({64}), x).sync();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("tessera compile:"), std::string::npos) << err;
}

TEST(CompileLog, TimesTheLoweringAndNvrtcOfEachCheckedArchitecture) {
  std::string why;
  if (!nvrtc_here(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  const ScopedEnv log("TESSERA_LOG", "compile");
  const ScopedEnv check("TESSERA_NVRTC_CHECK", "sm_80");
  auto x = ones<float>({32, 64}, Device::cpu());
  testing::internal::CaptureStderr();
  (void)checked_colsum(zeros<float>({1, 64}, Device::cpu()).partition({1, 32}), x).sync();
  const std::string err = testing::internal::GetCapturedStderr();
  const std::vector<std::string> want = {"trace",
                                         "verify",
                                         "promote_locals",
                                         "canonical_order",
                                         "check_safety",
                                         "dce",
                                         "lower sm_80",
                                         "nvrtc sm_80",
                                         "lower sm_80.unaligned",
                                         "nvrtc sm_80.unaligned",
                                         "total (on cpu)"};
  EXPECT_EQ(stages(err, "checked_colsum"), want) << err;
}

TEST(CompileDump, TheStagesAreListedInPipelineOrder) {
  const std::vector<std::string_view> want = {
      "traced", "promote_locals", "canonical_order", "ir", "layouts", "cuda", "ptx", "cubin"};
  EXPECT_EQ(runtime::dump_stages(), want);
}

TEST(CompileDump, NamesThatAreNoStageAreFound) {
  const ScopedEnv dump("TESSERA_DUMP", "ir,sass,cuda,,ptxx,all");
  EXPECT_EQ(runtime::unknown_dump_stages(), (std::vector<std::string>{"sass", "ptxx"}));
}

TEST(CompileDump, EveryStageWritesWhatItMade) {
  std::string why;
  if (!nvrtc_here(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  const fs::path dir = fs::temp_directory_path() / ("tessera_dump_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const ScopedEnv dump("TESSERA_DUMP", "all");
  const ScopedEnv where("TESSERA_DUMP_DIR", dir.string());
  const ScopedEnv check("TESSERA_NVRTC_CHECK", "sm_90a");
  auto x = ones<float>({32, 64}, Device::cpu());
  testing::internal::CaptureStderr();
  (void)dumped_colsum(zeros<float>({1, 64}, Device::cpu()).partition({1, 32}), x).sync();
  const std::string err = testing::internal::GetCapturedStderr();
  // The IR stages on stderr, in pipeline order.
  size_t at = 0;
  for (const char* stage : {"traced", "promote_locals", "canonical_order", "ir"}) {
    const size_t found = err.find(std::string("// ---- ") + stage + " ----\n", at);
    ASSERT_NE(found, std::string::npos) << stage << "\n" << err;
    at = found;
  }
  // The backend's stages as files, for both variants NVRTC_CHECK compiles.
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().filename().string());
  for (const char* variant : {"dumped_colsum.sm_90a.", "dumped_colsum.sm_90a.unaligned."}) {
    for (const char* ext : {".layouts", ".cu", ".ptx", ".cubin"}) {
      const auto named = [&](const std::string& f) {
        const bool unaligned = f.find(".unaligned.") != std::string::npos;
        return f.rfind(variant, 0) == 0 &&
               unaligned == (std::string(variant).find("unaligned") != std::string::npos) &&
               f.size() > std::string(ext).size() &&
               f.compare(f.size() - std::string(ext).size(), std::string::npos, ext) == 0;
      };
      const auto it = std::find_if(files.begin(), files.end(), named);
      ASSERT_NE(it, files.end()) << variant << "*" << ext;
      std::ifstream in(dir / *it, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
      if (std::string(ext) == ".cu") {
        EXPECT_NE(text.find("tessera_dumped_colsum"), std::string::npos);
        // The column argmax goes through shared memory: the plan is in the source.
        EXPECT_NE(text.find("// shared memory: "), std::string::npos) << text;
      }
      if (std::string(ext) == ".layouts") {
        // The lowered form: the loaded tile distributed over the threads, the column sum's
        // result a slice of it or converted (the layout the store reads it in).
        EXPECT_EQ(text.rfind("kernel dumped_colsum\n", 0), 0u) << text;
        EXPECT_NE(text.find(" = load "), std::string::npos) << text;
        EXPECT_NE(text.find("f32[32, 32] distributed"), std::string::npos) << text;
      }
      if (std::string(ext) == ".ptx") {
        EXPECT_NE(text.find(".target sm_90a"), std::string::npos);
      }
      if (std::string(ext) == ".cubin") {
        EXPECT_EQ(text.rfind("\x7f"
                             "ELF",
                             0),
                  0u);  // an ELF file, for cuobjdump -sass
      }
    }
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::test

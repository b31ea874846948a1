// `tessera doctor` and `tessera cache`, run as a user would run them. The no-GPU cases skip
// themselves where a GPU is usable.
#include <gtest/gtest.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "tessera/backend/cuda/driver.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace {

namespace fs = std::filesystem;

struct CliRun {
  int status = -1;
  std::string output;
};

// Runs the tool with the environment's TESSERA_DEVICE replaced by `env` (VAR=value ...),
// capturing stdout and stderr.
CliRun tessera(const std::string& env, const std::string& args) {
  const std::string command =
      "env -u TESSERA_DEVICE " + env + " " + TESSERA_CLI + " " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buffer{};
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) r.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera-doctor-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    env_ = "TESSERA_CACHE_DIR=" + dir_.string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string env_;
};

bool driver_present() {
  return tessera::backend::cuda::driver_available(nullptr);
}

TEST_F(DoctorTest, WithoutAGpuItSaysTheCpuBackendWillBeUsedAndSucceeds) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed here";
  const CliRun r = tessera(env_, "doctor");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("✓ CPU backend"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("✗ CUDA driver: the CUDA driver library libcuda.so.1"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Tessera will run kernels on the CPU backend"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("✓ kernel cache: " + dir_.string() + " is writable"), std::string::npos)
      << r.output;
}

TEST_F(DoctorTest, AskingForAGpuThatIsNotThereFails) {
  if (driver_present()) GTEST_SKIP() << "a CUDA driver is installed here";
  const CliRun r = tessera("TESSERA_DEVICE=cuda " + env_, "doctor");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("✗ GPU cuda:0: device cuda:0 was asked for"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("Tessera cannot run kernels as configured"), std::string::npos)
      << r.output;
}

TEST_F(DoctorTest, MalformedDeviceNameFails) {
  const CliRun r = tessera("TESSERA_DEVICE=gpu0 " + env_, "doctor");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("✗ TESSERA_DEVICE: 'gpu0' is not a device"), std::string::npos)
      << r.output;
}

TEST_F(DoctorTest, UnwritableCacheIsReportedButNotFatal) {
  fs::create_directories(dir_);
  {
    FILE* f = fopen((dir_ / "file").c_str(), "w");
    fclose(f);
  }
  const CliRun r =
      tessera("TESSERA_DEVICE=cpu TESSERA_CACHE_DIR=" + (dir_ / "file" / "c").string(), "doctor");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("✗ kernel cache: cannot create"), std::string::npos) << r.output;
}

TEST_F(DoctorTest, CacheCommandsShowAndClearTheFolder) {
  CliRun r = tessera(env_, "cache dir");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, dir_.string() + "\n");
  fs::create_directories(dir_);
  {
    FILE* f = fopen((dir_ / "0123456789abcdef.tsjit").c_str(), "w");
    fputs("12345", f);
    fclose(f);
  }
  r = tessera(env_, "cache size");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output.rfind("5 bytes in 1 entry", 0), 0u) << r.output;
  r = tessera(env_, "cache clear");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.output, "removed 1 entry from " + dir_.string() + "\n");
  EXPECT_FALSE(fs::exists(dir_ / "0123456789abcdef.tsjit"));
}

TEST_F(DoctorTest, CacheReportListsEachEntryWithItsKernelAndHits) {
  using tessera::runtime::JitCache;
  const JitCache::Config config{dir_, uint64_t{1} << 30};
  const std::string key = tessera::runtime::jit_key({.program = "p", .arch = "sm_80"});
  for (int run = 0; run < 3; ++run) {  // built once, then loaded from the disk twice
    JitCache cache(config);
    cache.get(key, "softmax", [] { return std::vector<char>(100, 'x'); });
  }
  const uintmax_t bytes = fs::file_size(JitCache(config).entry_path(key));
  const CliRun r = tessera(env_, "cache");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output, dir_.string() + ": 1 entry, " + std::to_string(bytes) +
                          " bytes (bound 1.0 GiB), 2 hits (a hit: a run that loaded a kernel "
                          "instead of compiling it)\n" +
                          "      hits        size  kernel\n" + "         2  " +
                          std::string(10 - std::to_string(bytes).size() - 6, ' ') +
                          std::to_string(bytes) + " bytes  softmax for sm_80\n");
}

TEST_F(DoctorTest, UnknownCommandsFailWithTheUsage) {
  CliRun r = tessera(env_, "frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("usage: tessera <command>"), std::string::npos) << r.output;
  r = tessera(env_, "cache shrink");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.output.find("usage: tessera cache dir|size|clear"), std::string::npos) << r.output;
}

}  // namespace

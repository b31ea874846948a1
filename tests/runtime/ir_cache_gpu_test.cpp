// On a GPU, with TESSERA_IR_CACHE=on: a second process of this program launches a kernel from
// the IR the first one stored, without tracing it, and computes what the first computed (the
// IR, locations included, survives the trip through bytes).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

struct CacheFolder {
  std::string made;
  CacheFolder() {
    setenv("TESSERA_IR_CACHE", "on", 0);  // off by default; the twin below turns it off again
    if (std::getenv("TESSERA_IR_TEST_CHILD")) return;
    char dir[] = "/tmp/tessera-ir-cache-gpu-test-XXXXXX";
    if (!mkdtemp(dir)) return;
    made = dir;
    setenv("TESSERA_CACHE_DIR", dir, 1);
  }
  ~CacheFolder() {
    std::error_code ignored;
    if (!made.empty()) std::filesystem::remove_all(made, ignored);
  }
} g_cache_folder;

int g_traces = 0;

TESSERA_KERNEL(gpu_counted, Out<float> z, In<float> x, Scalar<float> a) {
  ++g_traces;
  const Tile<float> v = load_like(x, z);
  z.store(exp(v * a) + v);
};

std::vector<float> launch_on_gpu() {
  std::vector<float> xs(5000);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 97) * 0.01f;
  const Device gpu = Device::cuda(0);
  auto [z, x, a] =
      gpu_counted(zeros<float>({5000}, gpu).partition({1024}), from_host(xs, {5000}, gpu), 0.5f)
          .sync();
  return std::move(z).unpartition().to_vector();
}

// The child: the result must be the parent's (written to a file), with no trace.
TEST(IrCacheGpuChild, DISABLED_LaunchesFromTheStoredIr) {
  // Run on its own (scripts/gpu_check.sh runs disabled tests too) it has no parent's result.
  if (!std::getenv("TESSERA_IR_TEST_WANT"))
    GTEST_SKIP()
        << "the child of IrCacheGpu.ASecondProcessLaunchesWithoutTracingAndComputesTheSame";
  const std::vector<float> got = launch_on_gpu();
  EXPECT_EQ(g_traces, 0);
  const std::vector<float> want = [] {
    std::vector<float> v(5000);
    FILE* f = std::fopen(std::getenv("TESSERA_IR_TEST_WANT"), "rb");
    if (!f || std::fread(v.data(), sizeof(float), v.size(), f) != v.size()) v.clear();
    if (f) std::fclose(f);
    return v;
  }();
  ASSERT_EQ(got, want);
}

TEST(IrCacheGpu, ASecondProcessLaunchesWithoutTracingAndComputesTheSame) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const std::vector<float> first = launch_on_gpu();
  ASSERT_EQ(g_traces, 2);
  const std::string want = g_cache_folder.made + "/want.bin";
  FILE* f = std::fopen(want.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(first.data(), sizeof(float), first.size(), f), first.size());
  std::fclose(f);
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command =
      "TESSERA_IR_TEST_CHILD=1 TESSERA_IR_TEST_WANT='" + want + "' '" + self +
      "' --gtest_also_run_disabled_tests "
      "--gtest_filter=IrCacheGpuChild.DISABLED_LaunchesFromTheStoredIr >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  // Its twin with the read-back off traces, and so fails: the child does run and count.
  EXPECT_NE(std::system(("TESSERA_IR_CACHE=off " + command).c_str()), 0) << command;
}

}  // namespace
}  // namespace tessera::test

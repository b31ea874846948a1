// What the JIT cache tells a user: a status line while a slow build runs (and none for a fast one
// or under TESSERA_QUIET), and per-entry hit counts that `tessera cache` reports, kept exactly when
// many instances (as many processes) hit one entry at once.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../runtime/scoped_env.hpp"
#include "tessera/runtime/jit_cache.hpp"

using namespace tessera::runtime;
namespace fs = std::filesystem;

namespace {

using std::chrono::milliseconds;

// A build this long gets its status line (after 1 ms) even on a machine so loaded that the
// watcher thread waits long to run.
constexpr milliseconds kSlow(1000);

// A key made for sm_90a, as the GPU launch path makes them.
std::string key_for(std::string_view program) {
  return jit_key({.program = program,
                  .specialization = "test",
                  .arch = "sm_90a",
                  .compiler_version = 12080,
                  .options = ""});
}

// A fresh folder per test, removed afterwards.
class JitFeedbackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tessera-jit-feedback-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A status line after `after`; the disk tier in dir_ (or none).
  JitCache::Config config(milliseconds after, bool quiet = false, bool disk = true) const {
    JitCache::Config c{disk ? dir_ : fs::path(), uint64_t{1} << 30};
    c.status_after = after;
    c.quiet = quiet;
    return c;
  }

  // What get() printed on stderr for a build that takes `takes`.
  static std::string stderr_of_build(JitCache& cache, const std::string& key, milliseconds takes) {
    ::testing::internal::CaptureStderr();
    cache.get(key, "gemm", [&] {
      std::this_thread::sleep_for(takes);
      return std::vector<char>{'c', 'u', 'b', 'i', 'n'};
    });
    return ::testing::internal::GetCapturedStderr();
  }

  fs::path dir_;
};

TEST_F(JitFeedbackTest, SlowBuildPrintsOneLineNamingTheKernelAndArch) {
  JitCache cache(config(milliseconds(1)));
  EXPECT_EQ(stderr_of_build(cache, key_for("slow"), kSlow),
            "tessera: compiling gemm for sm_90a (once: later runs load it from the cache); "
            "TESSERA_QUIET=1 hides this line\n");
}

TEST_F(JitFeedbackTest, SlowBuildWithoutDiskCacheDoesNotPromiseOne) {
  JitCache cache(config(milliseconds(1), false, /*disk=*/false));
  EXPECT_EQ(stderr_of_build(cache, key_for("slow"), kSlow),
            "tessera: compiling gemm for sm_90a; TESSERA_QUIET=1 hides this line\n");
}

TEST_F(JitFeedbackTest, FastBuildPrintsNothing) {
  JitCache cache(config(milliseconds(5000)));  // far above the build, however loaded the machine
  EXPECT_EQ(stderr_of_build(cache, key_for("fast"), milliseconds(0)), "");
}

TEST_F(JitFeedbackTest, QuietSilencesTheStatusLine) {
  JitCache cache(config(milliseconds(1), /*quiet=*/true));
  EXPECT_EQ(stderr_of_build(cache, key_for("slow"), kSlow), "");
}

TEST(JitFeedbackConfig, QuietComesFromTesseraQuiet) {
  ScopedEnv quiet("TESSERA_QUIET", nullptr);
  EXPECT_FALSE(JitCache::config_from_environment().quiet);
  EXPECT_EQ(JitCache::config_from_environment().status_after, milliseconds(500));
  quiet.set("1");
  EXPECT_TRUE(JitCache::config_from_environment().quiet);
  quiet.set("0");
  EXPECT_FALSE(JitCache::config_from_environment().quiet);
}

TEST(JitKeyArch, IsReadBackFromAKeyAndEmptyForAnythingElse) {
  EXPECT_EQ(jit_key_arch(key_for("x")), "sm_90a");
  EXPECT_EQ(jit_key_arch(jit_key({.program = "p", .arch = "sm_80"})), "sm_80");
  EXPECT_EQ(jit_key_arch(""), "");
  EXPECT_EQ(jit_key_arch("tessera:5:0.1.0\nprogram:1:x\n"), "");
  EXPECT_EQ(jit_key_arch("tessera:5:0.1.0\narch:99:sm_90a\n"), "");  // a size past the end
}

// One new instance per load: its memory is empty, so each get() reads the disk, as a new process
// would.
std::vector<char> load_fresh(const JitCache::Config& config, const std::string& key) {
  JitCache cache(config);
  return *cache.get(key, "gemm", [] { return std::vector<char>{'n', 'e', 'w'}; });
}

TEST_F(JitFeedbackTest, DiskHitsAreCountedPerEntryWithItsKernel) {
  const std::string a = key_for("a"), b = key_for("b");
  load_fresh(config(milliseconds(500)), a);  // built: no hits yet
  load_fresh(config(milliseconds(500)), b);
  for (int i = 0; i < 3; ++i) load_fresh(config(milliseconds(500)), a);
  const JitCache cache(config(milliseconds(500)));
  const std::vector<JitCache::DiskEntry> entries = cache.disk_entries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].path, cache.entry_path(a));  // most hits first
  EXPECT_EQ(entries[0].hits, 3u);
  EXPECT_EQ(entries[0].description, "gemm for sm_90a");
  EXPECT_EQ(entries[1].hits, 0u);
  EXPECT_EQ(entries[1].bytes, fs::file_size(cache.entry_path(b)));
  EXPECT_EQ(cache.disk_usage().hits, 3u);
}

TEST_F(JitFeedbackTest, HitsFromManyInstancesAtOnceAreAllCounted) {
  const std::string key = key_for("shared");
  load_fresh(config(milliseconds(500)), key);
  constexpr int kThreads = 8, kLoads = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kLoads; ++i) load_fresh(config(milliseconds(500)), key);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(JitCache(config(milliseconds(500))).disk_usage().hits, uint64_t{kThreads * kLoads});
}

TEST_F(JitFeedbackTest, ClearRemovesTheHitRecordsToo) {
  const std::string key = key_for("k");
  load_fresh(config(milliseconds(500)), key);
  load_fresh(config(milliseconds(500)), key);
  JitCache cache(config(milliseconds(500)));
  EXPECT_EQ(cache.clear_disk(), 1u);
  EXPECT_TRUE(fs::is_empty(dir_));
  load_fresh(config(milliseconds(500)), key);  // built again: its count starts again
  EXPECT_EQ(cache.disk_usage().hits, 0u);
}

TEST_F(JitFeedbackTest, EvictionRemovesTheEvictedEntrysHitRecord) {
  JitCache::Config small = config(milliseconds(500));
  JitCache probe(small);
  const std::string a = key_for("a"), b = key_for("b");
  load_fresh(small, a);
  load_fresh(small, a);  // a hit: a has a record with a count
  const uint64_t one_entry = fs::file_size(probe.entry_path(a));
  small.max_bytes = one_entry + one_entry / 2;    // room for one entry only
  std::this_thread::sleep_for(milliseconds(20));  // b is more recent than a
  load_fresh(small, b);
  EXPECT_FALSE(fs::exists(probe.entry_path(a)));
  size_t records = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_))
    if (e.path().extension() == ".hits") ++records;
  EXPECT_EQ(records, 1u);  // b's alone
}

}  // namespace

// The JIT cache, on the CPU: one build per key across threads, the disk tier across instances
// (as across processes), damaged entries rebuilt, the size bound kept by evicting the least
// recently used entries.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../runtime/scoped_env.hpp"
#include "tessera/core/error.hpp"
#include "tessera/runtime/jit_cache.hpp"

using namespace tessera;
using namespace tessera::runtime;
namespace fs = std::filesystem;

namespace {

// A payload that differs per key, so that a wrong entry cannot pass for the right one.
std::vector<char> payload_for(const std::string& key, size_t size = 1000) {
  std::vector<char> p(size);
  uint64_t h = fnv1a64(key);
  for (char& c : p) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    c = static_cast<char>(h >> 56);
  }
  return p;
}

// get() with a build that counts its calls.
std::vector<char> get(JitCache& cache, const std::string& key, std::atomic<int>& builds,
                      size_t size = 1000) {
  return *cache.get(key, "test", [&] {
    ++builds;
    return payload_for(key, size);
  });
}

void flip_byte(const fs::path& file, std::streamoff offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x5a);
  f.seekp(offset);
  f.write(&c, 1);
}

// A fresh folder per test, removed afterwards.
class JitCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tessera-jit-test-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  JitCache::Config config(uint64_t max_bytes = uint64_t{1} << 30) const {
    return {dir_, max_bytes};
  }

  fs::path dir_;
};

TEST_F(JitCacheTest, ConcurrentGettersOfOneKeyBuildOnce) {
  JitCache cache(config());
  std::atomic<int> builds{0};
  constexpr int kThreads = 16;
  std::vector<std::vector<char>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      results[static_cast<size_t>(t)] = *cache.get("kernel", "test", [&] {
        ++builds;
        // Slow, so that the other threads arrive while it runs.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        return payload_for("kernel");
      });
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(builds.load(), 1);
  for (const auto& r : results) EXPECT_EQ(r, payload_for("kernel"));
  EXPECT_EQ(cache.stats().builds, 1u);
  EXPECT_EQ(cache.stats().memory_hits, static_cast<uint64_t>(kThreads - 1));
}

TEST_F(JitCacheTest, BuildsOfDifferentKeysRunAtTheSameTime) {
  JitCache cache(config());
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  bool both_seen[2] = {false, false};
  auto build = [&](int which) {
    return [&, which] {
      std::unique_lock lock(mu);
      ++in_flight;
      cv.notify_all();
      // Each build waits (up to 10 s) for the other to start: with one lock around builds,
      // neither would see the other.
      both_seen[which] =
          cv.wait_for(lock, std::chrono::seconds(10), [&] { return in_flight == 2; });
      return payload_for(std::to_string(which));
    };
  };
  std::thread a([&] { cache.get("a", "a", build(0)); });
  std::thread b([&] { cache.get("b", "b", build(1)); });
  a.join();
  b.join();
  EXPECT_TRUE(both_seen[0]);
  EXPECT_TRUE(both_seen[1]);
}

TEST_F(JitCacheTest, AnotherInstanceReadsTheEntryFromDisk) {
  std::atomic<int> builds{0};
  {
    JitCache first(config());
    EXPECT_EQ(get(first, "kernel", builds), payload_for("kernel"));
  }
  EXPECT_TRUE(fs::exists(JitCache(config()).entry_path("kernel")));
  JitCache second(config());  // as a new process would
  EXPECT_EQ(get(second, "kernel", builds), payload_for("kernel"));
  EXPECT_EQ(builds.load(), 1);
  EXPECT_EQ(second.stats().disk_hits, 1u);
  EXPECT_EQ(second.stats().builds, 0u);
}

TEST_F(JitCacheTest, MemoryHitsDoNotReadTheDisk) {
  JitCache cache(config());
  std::atomic<int> builds{0};
  get(cache, "kernel", builds);
  fs::remove(cache.entry_path("kernel"));
  EXPECT_EQ(get(cache, "kernel", builds), payload_for("kernel"));
  EXPECT_EQ(builds.load(), 1);
  EXPECT_EQ(cache.stats().memory_hits, 1u);
  EXPECT_FALSE(fs::exists(cache.entry_path("kernel")));
}

TEST_F(JitCacheTest, ClearMemoryFallsBackToTheDisk) {
  JitCache cache(config());
  std::atomic<int> builds{0};
  get(cache, "kernel", builds);
  cache.clear_memory();
  EXPECT_EQ(get(cache, "kernel", builds), payload_for("kernel"));
  EXPECT_EQ(builds.load(), 1);
  EXPECT_EQ(cache.stats().disk_hits, 1u);
}

// Damages the entry of "kernel" with `damage`, then checks that a fresh instance rebuilds it
// (once), returns the right payload, and leaves a whole entry that the next instance reads.
template <class Damage>
void expect_rebuilt_after(const JitCache::Config& config, Damage damage) {
  std::atomic<int> builds{0};
  {
    JitCache first(config);
    get(first, "kernel", builds);
  }
  const fs::path entry = JitCache(config).entry_path("kernel");
  damage(entry);
  JitCache second(config);
  EXPECT_EQ(get(second, "kernel", builds), payload_for("kernel"));
  EXPECT_EQ(builds.load(), 2);
  EXPECT_EQ(second.stats().corrupt_entries, 1u);
  JitCache third(config);
  EXPECT_EQ(get(third, "kernel", builds), payload_for("kernel"));
  EXPECT_EQ(third.stats().disk_hits, 1u);
  EXPECT_EQ(builds.load(), 2);
}

TEST_F(JitCacheTest, TruncatedEntryIsRebuilt) {
  expect_rebuilt_after(
      config(), [](const fs::path& entry) { fs::resize_file(entry, fs::file_size(entry) - 100); });
}

TEST_F(JitCacheTest, EntryCutInsideItsHeaderIsRebuilt) {
  expect_rebuilt_after(config(), [](const fs::path& entry) { fs::resize_file(entry, 20); });
}

TEST_F(JitCacheTest, CorruptedPayloadIsRebuilt) {
  expect_rebuilt_after(config(), [](const fs::path& entry) {
    flip_byte(entry, static_cast<std::streamoff>(fs::file_size(entry)) - 1);
  });
}

TEST_F(JitCacheTest, CorruptedHeaderIsRebuilt) {
  // Byte 32 lies in the payload size: a damaged size must not be trusted.
  expect_rebuilt_after(config(), [](const fs::path& entry) { flip_byte(entry, 32); });
}

TEST_F(JitCacheTest, EntryOfAnotherKeyIsRebuilt) {
  // As if two keys hashed to one file name: the stored key tells them apart.
  std::atomic<int> builds{0};
  {
    JitCache first(config());
    get(first, "other", builds);
  }
  expect_rebuilt_after(config(), [this](const fs::path& entry) {
    fs::copy_file(JitCache(config()).entry_path("other"), entry,
                  fs::copy_options::overwrite_existing);
  });
}

TEST_F(JitCacheTest, EvictsTheLeastRecentlyUsedEntriesToStayUnderTheBound) {
  std::atomic<int> builds{0};
  const size_t payload = 10000;
  // Room for three entries (payload + header + key), not four.
  const uint64_t bound = 3 * payload + 3 * 200;
  JitCache cache(config(bound));
  const auto now = fs::file_time_type::clock::now();
  for (int i = 0; i < 3; ++i) {
    get(cache, "k" + std::to_string(i), builds, payload);
    // Entries made one hour apart, oldest first (file times have coarse resolution).
    fs::last_write_time(cache.entry_path("k" + std::to_string(i)), now - std::chrono::hours(3 - i));
  }
  // k0 is the oldest, but a hit makes it the most recently used: k1 goes instead.
  JitCache reader(config(bound));
  get(reader, "k0", builds, payload);
  EXPECT_EQ(reader.stats().disk_hits, 1u);
  get(cache, "k3", builds, payload);

  EXPECT_TRUE(fs::exists(cache.entry_path("k0")));
  EXPECT_FALSE(fs::exists(cache.entry_path("k1")));
  EXPECT_TRUE(fs::exists(cache.entry_path("k2")));
  EXPECT_TRUE(fs::exists(cache.entry_path("k3")));
  EXPECT_LE(cache.disk_usage().bytes, bound);
  EXPECT_EQ(cache.stats().evictions, 1u);
}

TEST_F(JitCacheTest, WritesScanTheFolderOnlyWhenTheyMayPassTheBound) {
  std::atomic<int> builds{0};
  const size_t payload = 1000;
  // Room for ten entries; the folder is walked at the first write, then not until the writes
  // this cache counted would pass the bound.
  const uint64_t bound = 10 * (payload + 200);
  JitCache cache(config(bound));
  for (int i = 0; i < 9; ++i) get(cache, "k" + std::to_string(i), builds, payload);
  EXPECT_EQ(cache.stats().folder_scans, 1u);
  EXPECT_EQ(cache.stats().evictions, 0u);
  for (int i = 9; i < 14; ++i) get(cache, "k" + std::to_string(i), builds, payload);
  EXPECT_GE(cache.stats().folder_scans, 2u);
  EXPECT_GE(cache.stats().evictions, 1u);
  EXPECT_LE(cache.disk_usage().bytes, bound);
}

TEST_F(JitCacheTest, WritesOfAnotherProcessAreCountedAtTheNextScan) {
  std::atomic<int> builds{0};
  const size_t payload = 1000;
  const uint64_t bound = 40 * (payload + 200);
  JitCache cache(config(bound));
  get(cache, "mine-0", builds, payload);
  // Another process (another instance here) fills the folder past the bound; this cache's own
  // count does not see that, but a scan every few dozen writes does.
  JitCache other(config(uint64_t{1} << 30));
  for (int i = 0; i < 60; ++i) get(other, "theirs-" + std::to_string(i), builds, payload);
  EXPECT_GT(cache.disk_usage().bytes, bound);
  for (int i = 1; i <= 33; ++i) get(cache, "mine-" + std::to_string(i), builds, payload);
  EXPECT_GE(cache.stats().folder_scans, 2u);
  EXPECT_LE(cache.disk_usage().bytes, bound);
}

TEST_F(JitCacheTest, EntryLargerThanTheBoundStaysInMemoryOnly) {
  JitCache cache(config(5000));
  std::atomic<int> builds{0};
  EXPECT_EQ(get(cache, "big", builds, 10000), payload_for("big", 10000));
  EXPECT_FALSE(fs::exists(cache.entry_path("big")));
  EXPECT_EQ(get(cache, "big", builds, 10000), payload_for("big", 10000));
  EXPECT_EQ(builds.load(), 1);
}

TEST_F(JitCacheTest, ZeroBoundTurnsTheDiskCacheOff) {
  JitCache cache(config(0));
  std::atomic<int> builds{0};
  get(cache, "kernel", builds);
  EXPECT_FALSE(cache.disk_enabled());
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(JitCacheTest, FailedBuildReachesEveryWaiterAndIsNotRemembered) {
  JitCache cache(config());
  std::atomic<int> attempts{0};
  auto failing = [&]() -> std::vector<char> {
    ++attempts;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    throw BackendError("NVRTC could not compile test");
  };
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      try {
        cache.get("kernel", "test", failing);
      } catch (const BackendError& e) {
        if (std::string(e.what()) == "NVRTC could not compile test") ++errors;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 4);
  EXPECT_EQ(attempts.load(), 1);
  // The next caller tries again, and its success is kept.
  std::atomic<int> builds{0};
  EXPECT_EQ(get(cache, "kernel", builds), payload_for("kernel"));
  EXPECT_EQ(builds.load(), 1);
}

TEST_F(JitCacheTest, UnwritableFolderDoesNotFailTheBuild) {
  // A folder path that runs through a regular file cannot be made, even by root.
  fs::create_directories(dir_);
  std::ofstream(dir_ / "file") << "x";
  JitCache cache({dir_ / "file" / "cache", uint64_t{1} << 30});
  std::atomic<int> builds{0};
  EXPECT_EQ(get(cache, "kernel", builds), payload_for("kernel"));
  EXPECT_EQ(cache.stats().disk_errors, 1u);
  std::string why;
  EXPECT_FALSE(cache.disk_writable(&why));
  EXPECT_NE(why.find("cannot create"), std::string::npos) << why;
}

TEST_F(JitCacheTest, ClearRemovesEntriesAndLeavesOtherFiles) {
  JitCache cache(config());
  std::atomic<int> builds{0};
  get(cache, "a", builds);
  get(cache, "b", builds);
  std::ofstream(dir_ / "notes.txt") << "mine";
  EXPECT_EQ(cache.disk_usage().entries, 2u);
  EXPECT_EQ(cache.clear_disk(), 2u);
  EXPECT_EQ(cache.disk_usage().entries, 0u);
  EXPECT_EQ(cache.disk_usage().bytes, 0u);
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
}

TEST_F(JitCacheTest, DiskUsageCountsEveryEntry) {
  JitCache cache(config());
  std::atomic<int> builds{0};
  get(cache, "a", builds, 1000);
  get(cache, "b", builds, 3000);
  const JitCache::DiskUsage u = cache.disk_usage();
  EXPECT_EQ(u.entries, 2u);
  EXPECT_EQ(u.bytes, fs::file_size(cache.entry_path("a")) + fs::file_size(cache.entry_path("b")));
  EXPECT_GT(u.bytes, 4000u);
}

TEST_F(JitCacheTest, FolderIsWritableWhenItCanBeMade) {
  JitCache cache(config());
  std::string why;
  EXPECT_TRUE(cache.disk_writable(&why)) << why;
  EXPECT_TRUE(fs::is_directory(dir_));
  EXPECT_EQ(cache.disk_usage().entries, 0u);  // the probe leaves nothing behind
}

TEST(JitCacheConfig, FolderComesFromTheEnvironment) {
  ScopedEnv home("HOME", "/home/someone");
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  ScopedEnv dir("TESSERA_CACHE_DIR", nullptr);
  EXPECT_EQ(JitCache::config_from_environment().dir, fs::path("/home/someone/.cache/tessera"));
  {
    ScopedEnv x("XDG_CACHE_HOME", "/var/cache/me");
    EXPECT_EQ(JitCache::config_from_environment().dir, fs::path("/var/cache/me/tessera"));
    ScopedEnv d("TESSERA_CACHE_DIR", "/tmp/kernels");
    EXPECT_EQ(JitCache::config_from_environment().dir, fs::path("/tmp/kernels"));
  }
}

TEST(JitCacheConfig, BoundDefaultsToOneGibAndTakesSuffixes) {
  {
    ScopedEnv max("TESSERA_CACHE_MAX_BYTES", nullptr);
    EXPECT_EQ(JitCache::config_from_environment().max_bytes, uint64_t{1} << 30);
  }
  {
    ScopedEnv max("TESSERA_CACHE_MAX_BYTES", "512M");
    EXPECT_EQ(JitCache::config_from_environment().max_bytes, uint64_t{512} << 20);
  }
  {
    ScopedEnv max("TESSERA_CACHE_MAX_BYTES", "12345");
    EXPECT_EQ(JitCache::config_from_environment().max_bytes, 12345u);
  }
}

TEST(JitCacheConfig, MalformedBoundIsAUsageErrorThatSaysWhatToWrite) {
  ScopedEnv max("TESSERA_CACHE_MAX_BYTES", "lots");
  try {
    JitCache::config_from_environment();
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("TESSERA_CACHE_MAX_BYTES='lots' is not a size"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace

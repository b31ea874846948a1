// The JIT cache: compiled kernels kept in memory and on disk, so that a kernel is compiled once per
// key per machine, not once per launch or per process.
//
// Memory: one entry per key, built once even when several threads ask at the same time (the
// first builds, the others wait for its result). A failed build is not remembered.
//
// Disk: one file per key in the cache folder (TESSERA_CACHE_DIR; else $XDG_CACHE_HOME/tessera;
// else ~/.cache/tessera), written to a temporary file and renamed into place, so that readers in
// other processes see a whole entry or none. Each entry has a header (magic, format version, key
// hash, key and payload sizes, payload checksum, and a checksum of the header itself) followed by
// the key and the payload; an entry that is truncated, corrupted or for another key is deleted and
// rebuilt. The folder is kept under TESSERA_CACHE_MAX_BYTES (default 1 GiB; 0 turns the disk
// cache off) by deleting the least recently used entries (by modification time, which a hit
// refreshes). Disk failures never fail a build: they are reported under TESSERA_LOG=jit.
//
// Beside each entry, a few bytes say which kernel it is and how many processes loaded it instead
// of compiling it (its hits), for `tessera cache`; updates are locked, so processes that hit one
// entry at once lose no count.
//
// A build still running after half a second prints one line on stderr (the kernel and the
// architecture), so that a long compile does not look like a hung program; TESSERA_QUIET=1
// silences it. TESSERA_LOG=jit prints one line on stderr per build (with its time), per hit, and
// per entry found corrupted.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tessera::runtime {

// 64-bit FNV-1a: the cache's key hash and payload checksum.
uint64_t fnv1a64(std::string_view bytes, uint64_t hash = 0xcbf29ce484222325ull);
// 16 lowercase hex digits.
std::string hex64(uint64_t value);

// This build's version ("0.1.0").
std::string_view tessera_version();

// True when TESSERA_LOG (a comma-separated list) names `topic`, or says "all".
bool log_enabled(std::string_view topic);

// What a compiled kernel depends on. Every part goes into the key, so a change of any of them
// (another IR or source text, another specialization, another GPU, another compiler, another
// Tessera) is another entry.
struct JitKeyParts {
  std::string_view program;         // what is compiled: the IR text or the generated source
  std::string_view specialization;  // dtypes, tile shapes, alignment classes, ...
  std::string_view arch;            // "sm_90a"
  int compiler_version = 0;         // nvrtc_version()
  std::string_view options;         // compiler options that change the output
};
// The key: each part length-prefixed (so that moving text from one part to the next changes the
// key), and this build's Tessera version.
std::string jit_key(const JitKeyParts& parts);
// The architecture a key was made for ("sm_90a"), for messages; empty if `key` is not a jit_key.
std::string_view jit_key_arch(std::string_view key);

class JitCache {
 public:
  struct Config {
    std::filesystem::path dir;               // empty: no disk tier
    uint64_t max_bytes = uint64_t{1} << 30;  // 0: no disk tier
    // A build running longer than this prints its status line, unless `quiet` (TESSERA_QUIET).
    std::chrono::milliseconds status_after{500};
    bool quiet = false;
  };
  // The folder and the bound from the environment (see the top of this file). Throws UsageError
  // for a TESSERA_CACHE_MAX_BYTES that is not a size.
  static Config config_from_environment();
  // The process's cache, configured from the environment on first use.
  static JitCache& global();

  explicit JitCache(Config config);
  JitCache(const JitCache&) = delete;
  JitCache& operator=(const JitCache&) = delete;

  using Blob = std::shared_ptr<const std::vector<char>>;
  using Build = std::function<std::vector<char>()>;

  // The payload stored under `key`: from memory, else from disk, else from `build` (which then
  // runs once for all the callers asking for this key meanwhile). `label` names the kernel in log
  // lines. A build's exception reaches every caller that waited for it.
  Blob get(const std::string& key, std::string_view label, const Build& build);
  // The payload stored under `key`, from memory or else from disk, never built: null when there
  // is none (an unusable entry on disk is deleted, as get() does). For records that are made by
  // something other than a build function, such as the autotuner's winners (tessera/tune.hpp).
  Blob find(const std::string& key, std::string_view label);
  // Stores `payload` under `key` in memory and on disk, replacing what was there.
  void put(const std::string& key, std::string_view label, std::vector<char> payload);

  const std::filesystem::path& dir() const { return config_.dir; }
  uint64_t max_bytes() const { return config_.max_bytes; }
  bool disk_enabled() const { return !config_.dir.empty() && config_.max_bytes > 0; }
  // Where the entry for `key` lives on disk.
  std::filesystem::path entry_path(const std::string& key) const;

  struct DiskUsage {
    uint64_t bytes = 0;
    size_t entries = 0;
    uint64_t hits = 0;  // over all entries
  };
  DiskUsage disk_usage() const;
  // One entry on disk, as `tessera cache` lists it.
  struct DiskEntry {
    std::filesystem::path path;
    uint64_t bytes = 0;
    uint64_t hits = 0;        // processes that loaded it instead of compiling it
    std::string description;  // "gemm for sm_90a"; empty for an entry of an older Tessera
  };
  // Every entry, most hits first.
  std::vector<DiskEntry> disk_entries() const;
  // Deletes every entry (and leftover temporary file) in the folder; returns how many entries.
  // Other files in the folder are left alone.
  size_t clear_disk();
  // Forgets the memory tier, so the next get() reads the disk (tests, benchmarks).
  void clear_memory();
  // True when the folder exists or can be made, and a file can be written in it; else false with
  // the reason in *why.
  bool disk_writable(std::string* why) const;

  struct Stats {
    uint64_t builds = 0;
    uint64_t memory_hits = 0;
    uint64_t disk_hits = 0;
    uint64_t corrupt_entries = 0;  // found on disk, deleted and rebuilt
    uint64_t disk_errors = 0;      // reads or writes that failed (the build still succeeded)
    uint64_t evictions = 0;
    uint64_t folder_scans = 0;  // walks of the folder to total its size (see store())
  };
  Stats stats() const;

 private:
  Blob load(const std::string& key, std::string_view label);
  void store(const std::string& key, std::string_view description,
             const std::vector<char>& payload);
  void evict(const std::filesystem::path& keep);

  Config config_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_future<Blob>> memory_;
  Stats stats_;
  // The folder's size as of the last scan plus what this process wrote since: a write scans the
  // folder only when this would pass the bound, or after kWritesPerScan writes (other processes
  // write to the same folder), not on every write.
  std::optional<uint64_t> folder_bytes_;
  int writes_since_scan_ = 0;
};

}  // namespace tessera::runtime

#include "tessera/runtime/jit_cache.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "jit_entry.hpp"
#include "jit_hits.hpp"
#include "slow_notice.hpp"
#include "tessera/core/error.hpp"

namespace tessera::runtime {

namespace fs = std::filesystem;

namespace {

// See JitCache::folder_bytes_.
constexpr int kWritesPerScan = 32;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void log_jit(const std::string& line) {
  if (log_enabled("jit")) std::cerr << "tessera jit: " << line << "\n";
}

// "gemm for sm_90a": what an entry holds, in the status line and in `tessera cache`.
std::string describe(std::string_view label, const std::string& key) {
  const std::string_view arch = jit_key_arch(key);
  std::string text(label.substr(0, 200));
  if (!arch.empty()) text += detail::cat(" for ", arch);
  return text;
}

// Removes an entry's file and its hit record.
void remove_entry(const fs::path& path) {
  std::error_code ignored;
  fs::remove(path, ignored);
  fs::remove(jit_hits::path_for(path), ignored);
}

// "1073741824", "512M", "1G", "64K" (binary multiples).
uint64_t parse_size(std::string_view text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view rest(end, static_cast<size_t>(text.data() + text.size() - end));
  uint64_t scale = 1;
  if (rest == "K" || rest == "KiB")
    scale = uint64_t{1} << 10;
  else if (rest == "M" || rest == "MiB")
    scale = uint64_t{1} << 20;
  else if (rest == "G" || rest == "GiB")
    scale = uint64_t{1} << 30;
  else if (!rest.empty())
    ec = std::errc::invalid_argument;
  if (ec != std::errc() || text.empty())
    fail<UsageError>("TESSERA_CACHE_MAX_BYTES='", text,
                     "' is not a size; write a byte count such as 1073741824, or 512M or 1G "
                     "(0 turns the disk cache off)");
  return value * scale;
}

}  // namespace

JitCache::Config JitCache::config_from_environment() {
  Config c;
  auto env = [](const char* name) -> const char* {
    const char* v = std::getenv(name);
    return v && *v ? v : nullptr;
  };
  if (const char* dir = env("TESSERA_CACHE_DIR"))
    c.dir = dir;
  else if (const char* xdg = env("XDG_CACHE_HOME"))
    c.dir = fs::path(xdg) / "tessera";
  else if (const char* home = env("HOME"))
    c.dir = fs::path(home) / ".cache" / "tessera";
  if (const char* max = env("TESSERA_CACHE_MAX_BYTES")) c.max_bytes = parse_size(max);
  c.quiet = status_lines_silenced();
  return c;
}

JitCache& JitCache::global() {
  // Leaked on purpose: kernels may still be looked up from static destructors.
  static JitCache* cache = new JitCache(config_from_environment());
  return *cache;
}

JitCache::JitCache(Config config) : config_(std::move(config)) {}

fs::path JitCache::entry_path(const std::string& key) const {
  return config_.dir / (hex64(fnv1a64(key)) + jit_entry::kExtension);
}

JitCache::Blob JitCache::get(const std::string& key, std::string_view label, const Build& build) {
  std::promise<Blob> promise;
  std::unique_lock lock(mu_);
  if (auto it = memory_.find(key); it != memory_.end()) {
    ++stats_.memory_hits;
    const std::shared_future<Blob> pending = it->second;
    lock.unlock();  // waiting for a build by another thread happens outside the lock
    log_jit(detail::cat("memory hit ", label));
    return pending.get();
  }
  memory_.emplace(key, promise.get_future().share());
  lock.unlock();

  // This caller builds; everyone else asking for the key meanwhile waits on the promise.
  try {
    Blob blob = load(key, label);
    if (!blob) {
      const auto t0 = Clock::now();
      {
        const SlowWorkNotice notice(
            config_.status_after,
            detail::cat("tessera: compiling ", describe(label, key),
                        disk_enabled() ? " (once: later runs load it from the cache)" : "",
                        "; TESSERA_QUIET=1 hides this line"),
            !config_.quiet);
        blob = std::make_shared<const std::vector<char>>(build());
      }
      log_jit(detail::cat("compiled ", label, " in ", ms_since(t0), " ms"));
      {
        std::lock_guard lock(mu_);
        ++stats_.builds;
      }
      store(key, describe(label, key), *blob);
    }
    promise.set_value(blob);
    return blob;
  } catch (...) {
    promise.set_exception(std::current_exception());
    lock.lock();
    memory_.erase(key);  // not remembered: the next caller tries again
    throw;
  }
}

JitCache::Blob JitCache::find(const std::string& key, std::string_view label) {
  {
    std::unique_lock lock(mu_);
    if (auto it = memory_.find(key); it != memory_.end()) {
      ++stats_.memory_hits;
      const std::shared_future<Blob> pending = it->second;
      lock.unlock();
      try {
        return pending.get();
      } catch (...) {  // a build that failed is not a record
        return nullptr;
      }
    }
  }
  Blob blob = load(key, label);
  if (blob) {
    std::promise<Blob> ready;
    ready.set_value(blob);
    std::lock_guard lock(mu_);
    memory_.try_emplace(key, ready.get_future().share());
  }
  return blob;
}

void JitCache::put(const std::string& key, std::string_view label, std::vector<char> payload) {
  auto blob = std::make_shared<const std::vector<char>>(std::move(payload));
  std::promise<Blob> ready;
  ready.set_value(blob);
  {
    std::lock_guard lock(mu_);
    memory_.insert_or_assign(key, ready.get_future().share());
  }
  store(key, describe(label, key), *blob);
}

JitCache::Blob JitCache::load(const std::string& key, std::string_view label) {
  if (!disk_enabled()) return nullptr;
  const auto t0 = Clock::now();
  const fs::path path = entry_path(key);
  jit_entry::ReadResult r = jit_entry::read(path, key);
  if (r.payload) {
    std::error_code ignored;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ignored);  // recently used
    jit_hits::count_hit(path, describe(label, key));
    log_jit(detail::cat("disk hit ", label, " in ", ms_since(t0), " ms"));
    std::lock_guard lock(mu_);
    ++stats_.disk_hits;
    return std::make_shared<const std::vector<char>>(std::move(*r.payload));
  }
  if (!r.missing) {
    log_jit(detail::cat("cache entry ", path.string(), " for ", label, " is unusable (", r.problem,
                        "); deleting it and rebuilding"));
    remove_entry(path);
    std::lock_guard lock(mu_);
    ++stats_.corrupt_entries;
  }
  return nullptr;
}

void JitCache::store(const std::string& key, std::string_view description,
                     const std::vector<char>& payload) {
  if (!disk_enabled()) return;
  const fs::path path = entry_path(key);
  // An entry larger than the whole bound would evict everything and then itself.
  if (sizeof(jit_entry::Header) + key.size() + payload.size() > config_.max_bytes) return;
  std::error_code ec;
  fs::create_directories(config_.dir, ec);
  // The hit record first: once the entry is in place another process may count a hit on it.
  if (!ec) jit_hits::start(path, description);
  std::string problem = ec ? detail::cat("cannot create ", config_.dir.string(), ": ", ec.message())
                           : jit_entry::write(path, key, payload);
  if (!problem.empty()) {
    log_jit("could not write the disk cache: " + problem);
    std::lock_guard lock(mu_);
    ++stats_.disk_errors;
    return;
  }
  const uint64_t written = sizeof(jit_entry::Header) + key.size() + payload.size();
  {
    std::lock_guard lock(mu_);
    if (folder_bytes_ && writes_since_scan_ < kWritesPerScan &&
        *folder_bytes_ + written <= config_.max_bytes) {
      *folder_bytes_ += written;
      ++writes_since_scan_;
      return;
    }
  }
  evict(path);
}

void JitCache::evict(const fs::path& keep) {
  struct Entry {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(config_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    std::error_code e;
    const auto mtime = fs::last_write_time(p, e);
    if (e) continue;
    if (p.extension() == jit_hits::kExtension) {
      // The record of an entry that is gone (deleted by hand, or its process died in between).
      if (!fs::exists(fs::path(p).replace_extension(jit_entry::kExtension), e) && !e &&
          now - mtime > std::chrono::minutes(10))
        fs::remove(p, e);
      continue;
    }
    if (jit_entry::is_temporary(p)) {
      // A writer that died between write and rename leaves one; a live one renames within
      // milliseconds.
      if (now - mtime > std::chrono::minutes(10)) fs::remove(p, e);
      continue;
    }
    if (p.extension() != jit_entry::kExtension) continue;
    const uint64_t bytes = fs::file_size(p, e);
    if (e) continue;
    total += bytes;
    entries.push_back({p, bytes, mtime});
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.folder_scans;
    writes_since_scan_ = 0;
    folder_bytes_ = total;
  }
  if (total <= config_.max_bytes) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  uint64_t evicted = 0;
  for (const Entry& e : entries) {
    if (total <= config_.max_bytes) break;
    if (e.path == keep) continue;
    std::error_code r;
    if (fs::remove(e.path, r)) {
      fs::remove(jit_hits::path_for(e.path), r);
      total -= e.bytes;
      ++evicted;
    }
  }
  {
    std::lock_guard lock(mu_);
    folder_bytes_ = total;
    stats_.evictions += evicted;
  }
  if (evicted)
    log_jit(detail::cat("evicted ", evicted, " least recently used entries to stay under ",
                        config_.max_bytes, " bytes"));
}

JitCache::DiskUsage JitCache::disk_usage() const {
  DiskUsage u;
  for (const DiskEntry& e : disk_entries()) {
    u.bytes += e.bytes;
    u.hits += e.hits;
    ++u.entries;
  }
  return u;
}

std::vector<JitCache::DiskEntry> JitCache::disk_entries() const {
  std::vector<DiskEntry> entries;
  std::error_code ec;
  if (config_.dir.empty()) return entries;
  for (fs::directory_iterator it(config_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != jit_entry::kExtension || jit_entry::is_temporary(it->path()))
      continue;
    std::error_code e;
    const uint64_t bytes = fs::file_size(it->path(), e);
    if (e) continue;
    jit_hits::Record record = jit_hits::read(it->path());
    entries.push_back({it->path(), bytes, record.hits, std::move(record.description)});
  }
  std::sort(entries.begin(), entries.end(), [](const DiskEntry& a, const DiskEntry& b) {
    return a.hits != b.hits ? a.hits > b.hits : a.path < b.path;
  });
  return entries;
}

size_t JitCache::clear_disk() {
  size_t removed = 0;
  std::error_code ec;
  if (config_.dir.empty()) return 0;
  std::vector<fs::path> doomed;
  for (fs::directory_iterator it(config_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == jit_entry::kExtension || p.extension() == jit_hits::kExtension ||
        jit_entry::is_temporary(p))
      doomed.push_back(p);
  }
  for (const fs::path& p : doomed) {
    std::error_code e;
    if (fs::remove(p, e) && p.extension() == jit_entry::kExtension && !jit_entry::is_temporary(p))
      ++removed;
  }
  return removed;
}

void JitCache::clear_memory() {
  std::lock_guard lock(mu_);
  memory_.clear();
}

bool JitCache::disk_writable(std::string* why) const {
  auto no = [why](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (config_.dir.empty())
    return no("no cache folder: set TESSERA_CACHE_DIR, or HOME for ~/.cache/tessera");
  if (config_.max_bytes == 0) return no("the disk cache is off (TESSERA_CACHE_MAX_BYTES=0)");
  std::error_code ec;
  fs::create_directories(config_.dir, ec);
  if (ec) return no(detail::cat("cannot create ", config_.dir.string(), ": ", ec.message()));
  const fs::path probe = config_.dir / ("doctor-probe" + std::string(".tmp.probe"));
  const std::string problem = jit_entry::write(probe, "probe", {'o', 'k'});
  std::error_code ignored;
  fs::remove(probe, ignored);
  if (!problem.empty()) return no(problem);
  return true;
}

JitCache::Stats JitCache::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

}  // namespace tessera::runtime

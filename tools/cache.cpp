// `tessera cache [dir|size|clear]`.
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace tessera::tools {

namespace {

constexpr const char* kCacheUsage =
    "usage: tessera cache dir|size|clear\n"
    "       tessera cache    (its entries: kernel, size and hits, most used first)\n";
// The most entries the report lists one by one.
constexpr size_t kListed = 20;

// "1.5 MiB".
std::string human(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) value /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof text, unit ? "%.1f %s" : "%.0f %s", value, units[unit]);
  return text;
}

// `tessera cache`: a summary line, then one line per entry (hits, size, kernel).
int report(const runtime::JitCache& cache) {
  if (cache.dir().empty()) {
    std::cerr << "tessera cache: no cache folder (set TESSERA_CACHE_DIR, or HOME)\n";
    return 1;
  }
  const std::vector<runtime::JitCache::DiskEntry> entries = cache.disk_entries();
  uint64_t bytes = 0, hits = 0;
  for (const auto& e : entries) bytes += e.bytes, hits += e.hits;
  std::cout << cache.dir().string() << ": " << entries.size()
            << (entries.size() == 1 ? " entry, " : " entries, ") << human(bytes) << " (bound "
            << human(cache.max_bytes()) << "), " << hits << (hits == 1 ? " hit" : " hits")
            << " (a hit: a run that loaded a kernel instead of compiling it)\n";
  if (entries.empty()) return 0;
  std::printf("%10s  %10s  %s\n", "hits", "size", "kernel");
  for (size_t i = 0; i < entries.size() && i < kListed; ++i) {
    const auto& e = entries[i];
    const std::string what =
        e.description.empty() ? e.path.filename().string() + " (older Tessera)" : e.description;
    std::printf("%10llu  %10s  %s\n", static_cast<unsigned long long>(e.hits),
                human(e.bytes).c_str(), what.c_str());
  }
  if (entries.size() > kListed) std::printf("... and %zu more\n", entries.size() - kListed);
  return 0;
}

}  // namespace

int cache(const std::vector<std::string>& args) {
  if (args.size() > 1) {
    std::cerr << kCacheUsage;
    return 2;
  }
  // Its own instance, configured like the runtime's: the tool has no kernels in memory.
  runtime::JitCache cache(runtime::JitCache::config_from_environment());
  if (args.empty()) return report(cache);
  const std::string& what = args[0];
  if (what == "dir") {
    if (cache.dir().empty()) {
      std::cerr << "tessera cache: no cache folder (set TESSERA_CACHE_DIR, or HOME)\n";
      return 1;
    }
    std::cout << cache.dir().string() << "\n";
    return 0;
  }
  if (what == "size") {
    const runtime::JitCache::DiskUsage u = cache.disk_usage();
    std::cout << u.bytes << " bytes in " << u.entries << (u.entries == 1 ? " entry" : " entries")
              << " (" << cache.dir().string() << ", bound " << cache.max_bytes() << " bytes)\n";
    return 0;
  }
  if (what == "clear") {
    const size_t removed = cache.clear_disk();
    std::cout << "removed " << removed << (removed == 1 ? " entry" : " entries") << " from "
              << cache.dir().string() << "\n";
    return 0;
  }
  std::cerr << "tessera cache: '" << what << "' is not a cache command\n" << kCacheUsage;
  return 2;
}

}  // namespace tessera::tools

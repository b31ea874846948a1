// `tessera cache dir|size|clear`.
#include <iostream>

#include "commands.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace tessera::tools {

namespace {
constexpr const char* kCacheUsage = "usage: tessera cache dir|size|clear\n";
}

int cache(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << kCacheUsage;
    return 2;
  }
  // Its own instance, configured like the runtime's: the tool has no kernels in memory.
  runtime::JitCache cache(runtime::JitCache::config_from_environment());
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

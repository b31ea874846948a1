#include "tessera/runtime/env.hpp"

#include <algorithm>
#include <cstdlib>

namespace tessera::runtime {

std::vector<std::string_view> env_list(const char* var) {
  std::vector<std::string_view> items;
  const char* env = std::getenv(var);
  std::string_view list(env ? env : "");
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (comma != 0) items.push_back(list.substr(0, comma));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

bool env_list_has(const char* var, std::string_view item) {
  const std::vector<std::string_view> items = env_list(var);
  return std::any_of(items.begin(), items.end(),
                     [&](std::string_view i) { return i == item || i == "all"; });
}

}  // namespace tessera::runtime

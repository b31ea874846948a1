// The pieces of the JIT cache that are plain functions: hashing, keys, the log switch.
#include <charconv>
#include <cstdlib>

#include "tessera/core/error.hpp"
#include "tessera/runtime/env.hpp"
#include "tessera/runtime/jit_cache.hpp"

#ifndef TESSERA_VERSION
#error "TESSERA_VERSION is defined by the build (CMakeLists.txt: the project's version)"
#endif

namespace tessera::runtime {

uint64_t fnv1a64(std::string_view bytes, uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string hex64(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[static_cast<size_t>(i)] = kDigits[value & 0xf];
  return out;
}

std::string_view tessera_version() {
  return TESSERA_VERSION;
}

bool log_enabled(std::string_view topic) { return env_list_has("TESSERA_LOG", topic); }

std::string jit_key(const JitKeyParts& p) {
  std::string key;
  key.reserve(p.program.size() + p.specialization.size() + p.options.size() + 128);
  auto part = [&key](std::string_view name, std::string_view value) {
    key += detail::cat(name, ":", value.size(), ":");
    key += value;
    key += '\n';
  };
  part("tessera", tessera_version());
  part("arch", p.arch);
  part("compiler", std::to_string(p.compiler_version));
  part("options", p.options);
  part("specialization", p.specialization);
  part("program", p.program);
  return key;
}

std::string_view jit_key_arch(std::string_view key) {
  // The second part of jit_key's layout: "tessera:<n>:<version>\narch:<n>:<arch>\n...".
  const size_t line = key.find('\n');
  if (line == std::string_view::npos) return {};
  const std::string_view rest = key.substr(line + 1);
  constexpr std::string_view kPrefix = "arch:";
  if (rest.substr(0, kPrefix.size()) != kPrefix) return {};
  const size_t colon = rest.find(':', kPrefix.size());
  if (colon == std::string_view::npos) return {};
  size_t size = 0;
  const auto [end, ec] = std::from_chars(rest.data() + kPrefix.size(), rest.data() + colon, size);
  if (ec != std::errc() || end != rest.data() + colon || colon + 1 + size > rest.size()) return {};
  return rest.substr(colon + 1, size);
}

}  // namespace tessera::runtime

// The on-disk format of one JIT cache entry. Private to the runtime (jit_cache.cpp).
//
//   Header (fixed size, native byte order; the magic tells a foreign one apart)
//   key bytes      (key_size)
//   payload bytes  (payload_size)
//
// The header carries a checksum of its own fields, so a damaged size is caught before it is
// trusted, and the file's length must be exactly header + key + payload, so a truncated entry is
// caught before its payload is read.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tessera::runtime::jit_entry {

inline constexpr char kMagic[8] = {'T', 'S', 'R', 'J', 'I', 'T', '\r', '\n'};
inline constexpr uint32_t kFormatVersion = 1;
// Entries end in this; clear and eviction touch no other files.
inline constexpr const char* kExtension = ".tsjit";

struct Header {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  uint64_t key_hash;
  uint64_t key_size;
  uint64_t payload_size;
  uint64_t payload_checksum;
  uint64_t header_checksum;  // of every field above
};
static_assert(sizeof(Header) == 56);

// Writes the entry at `path` atomically (a temporary file beside it, then a rename). Returns ""
// on success, else what went wrong.
std::string write(const std::filesystem::path& path, const std::string& key,
                  const std::vector<char>& payload);

struct ReadResult {
  std::optional<std::vector<char>> payload;  // set when the entry is whole and for `key`
  bool missing = false;                      // no file (a plain miss)
  std::string problem;                       // else: why the entry cannot be used
};
ReadResult read(const std::filesystem::path& path, const std::string& key);

// True for names of temporary files that write() makes.
bool is_temporary(const std::filesystem::path& path);

}  // namespace tessera::runtime::jit_entry

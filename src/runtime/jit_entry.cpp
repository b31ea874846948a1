#include "jit_entry.hpp"

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>

#include "tessera/core/error.hpp"
#include "tessera/runtime/jit_cache.hpp"

namespace tessera::runtime::jit_entry {

namespace fs = std::filesystem;

namespace {

constexpr const char* kTempMarker = ".tmp.";

uint64_t header_checksum(Header h) {
  h.header_checksum = 0;
  return fnv1a64(std::string_view(reinterpret_cast<const char*>(&h), sizeof h));
}

std::string_view bytes_of(const std::vector<char>& v) {
  return {v.data(), v.size()};
}

}  // namespace

bool is_temporary(const fs::path& path) {
  return path.filename().string().find(kTempMarker) != std::string::npos;
}

std::string write(const fs::path& path, const std::string& key, const std::vector<char>& payload) {
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.format_version = kFormatVersion;
  h.header_size = sizeof(Header);
  h.key_hash = fnv1a64(key);
  h.key_size = key.size();
  h.payload_size = payload.size();
  h.payload_checksum = fnv1a64(bytes_of(payload));
  h.header_checksum = header_checksum(h);

  // Unique per process and per call, so that concurrent writers never share a temporary file.
  static std::atomic<uint64_t> counter{0};
  const fs::path temp = path.string() + detail::cat(kTempMarker, ::getpid(), ".", counter++);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return detail::cat("cannot create ", temp.string());
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(key.data(), static_cast<std::streamsize>(key.size()));
    out.write(payload.data(), static_cast<std::streamsize>(payload.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temp, ignored);
      return detail::cat("cannot write ", temp.string(), " (disk full?)");
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);  // atomic: readers see the old entry, or none, or the new one
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    return detail::cat("cannot rename ", temp.string(), " to ", path.string(), ": ", ec.message());
  }
  return {};
}

ReadResult read(const fs::path& path, const std::string& key) {
  ReadResult r;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    r.missing = true;
    return r;
  }
  std::error_code ec;
  const uint64_t file_size = fs::file_size(path, ec);
  if (ec) {
    r.missing = true;  // deleted by another process meanwhile
    return r;
  }
  Header h{};
  if (file_size < sizeof h || !in.read(reinterpret_cast<char*>(&h), sizeof h)) {
    r.problem = detail::cat("truncated header (", file_size, " bytes)");
    return r;
  }
  if (std::memcmp(h.magic, kMagic, sizeof h.magic) != 0) {
    r.problem = "not a Tessera cache entry (bad magic)";
    return r;
  }
  if (h.header_checksum != header_checksum(h)) {
    r.problem = "corrupted header (checksum mismatch)";
    return r;
  }
  if (h.format_version != kFormatVersion || h.header_size != sizeof h) {
    r.problem = detail::cat("format version ", h.format_version, ", expected ", kFormatVersion);
    return r;
  }
  const uint64_t expected = sizeof h + h.key_size + h.payload_size;
  if (file_size != expected) {
    r.problem = detail::cat(file_size < expected ? "truncated" : "overlong", " entry (", file_size,
                            " bytes, expected ", expected, ")");
    return r;
  }
  if (h.key_size != key.size() || h.key_hash != fnv1a64(key)) {
    r.problem = "entry for another key (hash collision or corruption)";
    return r;
  }
  std::string stored_key(key.size(), '\0');
  std::vector<char> payload(h.payload_size);
  if (!in.read(stored_key.data(), static_cast<std::streamsize>(stored_key.size())) ||
      !in.read(payload.data(), static_cast<std::streamsize>(payload.size()))) {
    r.problem = "truncated entry (read failed)";
    return r;
  }
  if (stored_key != key) {
    r.problem = "entry for another key (hash collision or corruption)";
    return r;
  }
  if (fnv1a64(bytes_of(payload)) != h.payload_checksum) {
    r.problem = "corrupted payload (checksum mismatch)";
    return r;
  }
  r.payload = std::move(payload);
  return r;
}

}  // namespace tessera::runtime::jit_entry

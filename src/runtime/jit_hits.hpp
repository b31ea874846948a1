// What `tessera cache` reports of each JIT cache entry on disk: which kernel it is and how often
// it was used. A small text file beside each entry (<hash>.tsjit's is <hash>.hits): the count on
// its first line, the kernel and architecture on its second. Private to the runtime
// (jit_cache.cpp).
//
// A hit is a process loading a compiled kernel from the disk instead of compiling it (hits in a
// process's memory are not counted: they cost nothing worth reporting). Several processes may hit
// one entry at once, so every update is a read-modify-write under an exclusive flock() of the
// file: no count is lost. Failures are ignored: a hit count is a report, never a reason to fail a
// launch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tessera::runtime::jit_hits {

inline constexpr const char* kExtension = ".hits";

// The counter file of the entry at `entry`.
std::filesystem::path path_for(const std::filesystem::path& entry);

// A new entry's record: no hits yet. Written before the entry itself is renamed into place, so a
// hit by another process is never lost to it.
bool start(const std::filesystem::path& entry, std::string_view description);
// Adds one to the entry's count (a record made by an older Tessera, or lost, starts at 1).
bool count_hit(const std::filesystem::path& entry, std::string_view description);

struct Record {
  uint64_t hits = 0;        // 0 when there is no record
  std::string description;  // "gemm for sm_90a"; empty when unknown
};
Record read(const std::filesystem::path& entry);

}  // namespace tessera::runtime::jit_hits

// The autotuner's memory (tessera/tune.hpp): winners per key, in this process and in the JIT
// cache folder, and its log lines.
//
// A record on disk is a JIT cache entry (checksummed, written atomically, evicted with the rest)
// whose key names the tuner, the architecture and the launch's key, but not the candidates: a
// record made for another list of candidates is then found, reported as stale and replaced,
// rather than left behind under a key nobody asks for. Its payload is text:
//   tessera-tune 1
//   candidates <name>,<name>,...
//   winner <name>
//   times <name>=<ms>|skipped,...      (for people reading it; not used)
#include "tessera/tune.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include "tessera/runtime/env.hpp"
#include "tessera/runtime/gpu.hpp"
#include "tessera/runtime/jit_cache.hpp"

#include "graph_capture.hpp"

namespace tessera {

namespace {

constexpr std::string_view kHeader = "tessera-tune 1";

struct Memory {
  std::mutex mu;
  std::unordered_map<std::string, int> winners;  // memory key -> candidate index
};
Memory& memory() {
  static Memory* m = new Memory;  // leaked: tuned launches may run from static destructors
  return *m;
}

struct Counters {
  std::atomic<uint64_t> tunings{0}, timed{0}, skipped{0}, disk_hits{0}, memory_hits{0}, ignored{0};
};
Counters& counters() {
  static Counters c;
  return c;
}

std::string device_class(Device d) {
  return d.is_cuda() ? runtime::gpu_arch(d).str() : std::string("cpu");
}

// The disk key: the tuner, the architecture and the launch's key; not the candidates.
std::string disk_key(const std::string& tuner, const std::string& arch, const std::string& key) {
  const std::string program = "tune\n" + tuner + "\n" + key;
  return runtime::jit_key({program, "", arch, 0, ""});
}

std::string label_of(const std::string& tuner) {
  return tuner + " (tuning record)";
}

// "0.123 ms" with enough digits for CPU and GPU times alike.
std::string ms_text(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g ms", ms);
  return text;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

namespace runtime::tune {

void append_bucket(std::string& key, DType dtype, const Shape& shape) {
  if (!key.empty()) key += ' ';
  key += dtype_name(dtype);
  key += '[';
  for (size_t d = 0; d < shape.size(); ++d) {
    uint64_t b = 1;
    while (b < static_cast<uint64_t>(std::max<int64_t>(shape[d], 1))) b <<= 1;
    if (d) key += ',';
    key += std::to_string(b);
  }
  key += ']';
}

Table::Table(std::string name, std::vector<std::string> names)
    : name_(std::move(name)), names_(std::move(names)) {
  if (name_.empty() || name_.find('\n') != std::string::npos)
    fail<UsageError>(
        "tune::candidates: the tuner needs a name of one line (it names its record "
        "in the cache folder), such as \"mylib.gemm\"");
  for (size_t i = 0; i < names_.size(); ++i) {
    const std::string& n = names_[i];
    if (n.empty() || n.find_first_of(",\n") != std::string::npos)
      fail<UsageError>("tune::candidates '", name_, "': configuration ", i + 1, " is named '", n,
                       "'; give each configuration a non-empty name without ',' or line breaks, "
                       "such as \"128x128x32\"");
    for (size_t j = 0; j < i; ++j)
      if (names_[j] == n)
        fail<UsageError>("tune::candidates '", name_, "': configurations ", j + 1, " and ", i + 1,
                         " are both named '", n,
                         "'; a stored winner is found by its name, so "
                         "give each its own");
    if (i) joined_ += ',';
    joined_ += n;
  }
}

std::string Table::record_key(Device device, const std::string& key) const {
  return disk_key(name_, device_class(device), key);
}

bool Table::logging() {
  return runtime::log_enabled("tune");
}

void Table::log(const std::string& line) {
  if (logging()) std::cerr << "tessera tune: " << line << "\n";
}

std::unique_lock<std::mutex> Table::lock() {
  static std::mutex mu;
  return std::unique_lock(mu);
}

bool Table::timing_allowed(Device device, bool time_on_cpu) {
  if (env_list_has("TESSERA_TUNE", "off")) return false;
  return time_on_cpu || !device.is_cpu();
}

void Table::refuse_timing_in_capture(Device device, const std::string& key) const {
  if (!capturing()) return;
  const bool forced = env_list_has("TESSERA_TUNE", "force");
  refuse_in_capture(
      detail::cat("tuning '", name_, "' for ", key, " on ", device_class(device), " (",
                  forced ? "TESSERA_TUNE=force times it again in this process"
                         : "these shape buckets have no winner yet",
                  ": each candidate would be launched and waited for)"),
      "make this call once before capture(), with the same shape buckets, so that it is tuned "
      "there (or set TESSERA_TUNE=off: the first candidate is launched untimed)");
}

void Table::note_skipped(Device device, const std::string& key, size_t index,
                         const std::string& why) const {
  ++counters().skipped;
  log(detail::cat(name_, " [", device_class(device), " ", key, "]: skipped ", names_.at(index),
                  ": ", first_line(why)));
}

int Table::find(Device device, const std::string& key, bool disk) const {
  if (env_list_has("TESSERA_TUNE", "force")) disk = false;  // what is stored is timed again
  const std::string arch = device_class(device);
  const std::string mem_key = detail::cat(name_, '\n', arch, '\n', key, '\n', joined_);
  {
    std::lock_guard lock(memory().mu);
    if (auto it = memory().winners.find(mem_key); it != memory().winners.end()) {
      ++counters().memory_hits;
      return it->second;
    }
  }
  if (!disk) return -1;
  const std::string where = detail::cat(name_, " [", arch, " ", key, "]");
  JitCache::Blob blob = JitCache::global().find(disk_key(name_, arch, key), label_of(name_));
  if (!blob) return -1;
  // The record's lines.
  const std::string text(blob->begin(), blob->end());
  std::vector<std::string> lines;
  for (size_t at = 0; at <= text.size();) {
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  auto ignore = [&](const std::string& why) {
    ++counters().ignored;
    log(detail::cat(where, ": ignoring the stored record (", why, "); timing again"));
    return -1;
  };
  constexpr std::string_view kCandidates = "candidates ", kWinner = "winner ";
  if (lines.size() < 3 || lines[0] != kHeader ||
      lines[1].compare(0, kCandidates.size(), kCandidates) != 0 ||
      lines[2].compare(0, kWinner.size(), kWinner) != 0)
    return ignore("unreadable: not a tuning record of this Tessera");
  const std::string stored = lines[1].substr(kCandidates.size());
  if (stored != joined_)
    return ignore(detail::cat("stale: tuned among ", stored, ", the candidates are now ", joined_));
  const std::string winner = lines[2].substr(kWinner.size());
  const auto it = std::find(names_.begin(), names_.end(), winner);
  if (it == names_.end())
    return ignore(detail::cat("unreadable: its winner '", winner, "' is not a candidate"));
  const int index = static_cast<int>(it - names_.begin());
  ++counters().disk_hits;
  log(detail::cat(where, ": using ", winner, " (tuned by an earlier run, stored in ",
                  JitCache::global().entry_path(disk_key(name_, arch, key)).string(), ")"));
  std::lock_guard lock(memory().mu);
  memory().winners[mem_key] = index;
  return index;
}

int Table::pick(Device device, const std::string& key, const std::vector<Trial>& trials,
                SourceLoc call) const {
  const std::string arch = device_class(device);
  const std::string where = detail::cat(name_, " [", arch, " ", key, "]");
  int best = -1;
  std::string times;
  for (size_t i = 0; i < trials.size(); ++i) {
    const Trial& t = trials[i];
    if (i) times += ',';
    times += t.name + "=" + (t.ms < 0 ? std::string("skipped") : std::to_string(t.ms));
    if (t.ms < 0) continue;
    ++counters().timed;
    log(detail::cat(where, ": ", t.name, " ", ms_text(t.ms)));
    if (best < 0 || t.ms < trials[static_cast<size_t>(best)].ms) best = static_cast<int>(i);
  }
  ++counters().tunings;
  if (best < 0) {
    std::string reasons;
    for (const Trial& t : trials)
      reasons += detail::cat("\n  ", t.name, ": ", first_line(t.skipped));
    fail_at<LaunchError>(call, "tuned kernel '", name_,
                         "': every candidate was refused before it started, so there is nothing "
                         "to launch (the output was not touched):",
                         reasons, "\nFix the candidates, or add one that fits this launch");
  }
  const std::string text =
      detail::cat(kHeader, "\ncandidates ", joined_, "\nwinner ",
                  trials[static_cast<size_t>(best)].name, "\ntimes ", times, "\n");
  const std::string dkey = disk_key(name_, arch, key);
  JitCache::global().put(dkey, label_of(name_), std::vector<char>(text.begin(), text.end()));
  log(detail::cat(where, ": picked ", trials[static_cast<size_t>(best)].name, " (",
                  ms_text(trials[static_cast<size_t>(best)].ms), ")",
                  JitCache::global().disk_enabled()
                      ? ", stored in " + JitCache::global().entry_path(dkey).string()
                      : std::string(", not stored: the disk cache is off")));
  std::lock_guard lock(memory().mu);
  memory().winners[detail::cat(name_, '\n', arch, '\n', key, '\n', joined_)] = best;
  return best;
}

}  // namespace runtime::tune

namespace tune {

Stats stats() {
  const Counters& c = counters();
  return {c.tunings.load(),   c.timed.load(),       c.skipped.load(),
          c.disk_hits.load(), c.memory_hits.load(), c.ignored.load()};
}

void forget() {
  std::lock_guard lock(memory().mu);
  memory().winners.clear();
}

}  // namespace tune

}  // namespace tessera

#include "jit_hits.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <charconv>

namespace tessera::runtime::jit_hits {

namespace {

// An open record file, locked; closing the descriptor drops the lock.
class Locked {
 public:
  Locked(const std::filesystem::path& path, bool write)
      : fd_(::open(path.c_str(), (write ? O_RDWR | O_CREAT : O_RDONLY) | O_CLOEXEC, 0644)) {
    if (fd_ >= 0 && ::flock(fd_, write ? LOCK_EX : LOCK_SH) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~Locked() {
    if (fd_ >= 0) ::close(fd_);
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  bool ok() const { return fd_ >= 0; }

  // "<count>\n<description>\n"; a garbled or empty file reads as no hits.
  Record read() const {
    char text[512];
    const ssize_t n = ::pread(fd_, text, sizeof text, 0);
    Record r;
    if (n <= 0) return r;
    const std::string_view all(text, static_cast<size_t>(n));
    std::from_chars(all.data(), all.data() + all.size(), r.hits);
    if (const size_t nl = all.find('\n'); nl != std::string_view::npos) {
      const std::string_view rest = all.substr(nl + 1);
      r.description = std::string(rest.substr(0, rest.find('\n')));
    }
    return r;
  }
  bool write(uint64_t hits, std::string_view description) const {
    const std::string text = std::to_string(hits) + "\n" + std::string(description) + "\n";
    return ::pwrite(fd_, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size()) &&
           ::ftruncate(fd_, static_cast<off_t>(text.size())) == 0;
  }

 private:
  int fd_;
};

}  // namespace

std::filesystem::path path_for(const std::filesystem::path& entry) {
  std::filesystem::path p = entry;
  return p.replace_extension(kExtension);
}

bool start(const std::filesystem::path& entry, std::string_view description) {
  const Locked f(path_for(entry), true);
  return f.ok() && f.write(0, description);
}

bool count_hit(const std::filesystem::path& entry, std::string_view description) {
  const Locked f(path_for(entry), true);
  return f.ok() && f.write(f.read().hits + 1, description);
}

Record read(const std::filesystem::path& entry) {
  const Locked f(path_for(entry), false);
  return f.ok() ? f.read() : Record{};
}

}  // namespace tessera::runtime::jit_hits

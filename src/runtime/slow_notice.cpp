#include "slow_notice.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <system_error>

namespace tessera::runtime {

bool status_lines_silenced() {
  const char* quiet = std::getenv("TESSERA_QUIET");
  return quiet && *quiet && std::string_view(quiet) != "0";
}

SlowWorkNotice::SlowWorkNotice(std::chrono::milliseconds after, std::string line, bool enabled)
    : line_(std::move(line)) {
  if (!enabled) return;
  try {
    watcher_ = std::thread([this, after] {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, after, [this] { return done_; })) return;
      // One write of the whole line, so that lines from threads compiling at once do not mix.
      const std::string text = line_ + "\n";
      std::fwrite(text.data(), 1, text.size(), stderr);
      std::fflush(stderr);
    });
  } catch (const std::system_error&) {
    // No thread to spare: the work goes on without its status line.
  }
}

SlowWorkNotice::~SlowWorkNotice() {
  if (!watcher_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_one();
  watcher_.join();
}

}  // namespace tessera::runtime

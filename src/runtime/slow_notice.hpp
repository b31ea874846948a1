// A status line for work that turns out to be slow. Private to the runtime (the JIT cache and the
// compile pipeline use it around NVRTC).
//
// A kernel's first compile takes 80-170 ms on the H200 (README), but a large kernel, or NVRTC on a
// loaded machine, can take seconds, during which a program looks hung. So a compile that is still
// running after `after` (half a second) prints one line on stderr saying what it compiles and for
// which architecture; a faster one prints nothing. TESSERA_QUIET=1 silences the line.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace tessera::runtime {

// True when TESSERA_QUIET is set to anything but "" or "0".
bool status_lines_silenced();

// Prints `line` (and a newline) on stderr if it is still alive `after` from its construction. The
// line comes from a watcher thread while the owner works; the destructor stops the watcher and
// waits for it, so the line is never printed after the work is done. `enabled` false: does
// nothing (no thread).
class SlowWorkNotice {
 public:
  SlowWorkNotice(std::chrono::milliseconds after, std::string line, bool enabled = true);
  ~SlowWorkNotice();
  SlowWorkNotice(const SlowWorkNotice&) = delete;
  SlowWorkNotice& operator=(const SlowWorkNotice&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string line_;
  std::thread watcher_;
};

}  // namespace tessera::runtime

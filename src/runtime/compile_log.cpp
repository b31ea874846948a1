#include "compile_log.hpp"

#include <cstdio>
#include <exception>

#include "tessera/core/error.hpp"
#include "tessera/runtime/env.hpp"

namespace tessera::runtime {

bool compile_log_enabled() {
  return env_list_has("TESSERA_LOG", "compile");
}

CompileStage::CompileStage(std::string kernel, std::string stage)
    : kernel_(std::move(kernel)),
      stage_(std::move(stage)),
      start_(std::chrono::steady_clock::now()),
      exceptions_(std::uncaught_exceptions()) {}

CompileStage::~CompileStage() {
  if (ended_) return;
  if (std::uncaught_exceptions() > exceptions_) note_ = "failed";
  try {
    end();
  } catch (...) {  // a log line must not turn one error into a termination
  }
}

double CompileStage::end() {
  if (ended_) return ms_;
  ended_ = true;
  ms_ =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  if (compile_log_enabled()) {
    char time[32];
    std::snprintf(time, sizeof time, "%.3f ms", ms_);
    // One write per line: stages of kernels compiled on several threads do not interleave.
    const std::string line = detail::cat("tessera compile: ", kernel_, ": ", stage_, " ", time,
                                         note_.empty() ? "" : " (" + note_ + ")", "\n");
    std::fputs(line.c_str(), stderr);
  }
  return ms_;
}

}  // namespace tessera::runtime

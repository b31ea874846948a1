// TESSERA_LOG=compile: one line on stderr per stage of each kernel's compile, with its time, so
// that a slow first launch says where its time went:
//
//   tessera compile: add: trace 0.412 ms
//   tessera compile: add: promote_locals 0.031 ms
//   ...
//   tessera compile: add: nvrtc 92.107 ms (compiled)
//   tessera compile: add: load 0.804 ms
//   tessera compile: add: total 95.460 ms on cuda:0
//
// Private to the runtime (compile.cpp, compile_pipeline.cpp, gpu_launch.cpp).
#pragma once

#include <chrono>
#include <string>
#include <utility>

namespace tessera::runtime {

// True when TESSERA_LOG names "compile" (or "all").
bool compile_log_enabled();

// One stage of one kernel's compile, timed from construction to end() (or destruction). Prints
// its line when TESSERA_LOG=compile; a stage left by an exception says "(failed)".
class CompileStage {
 public:
  CompileStage(std::string kernel, std::string stage);
  ~CompileStage();
  CompileStage(const CompileStage&) = delete;
  CompileStage& operator=(const CompileStage&) = delete;
  // Text added after the time, in parentheses ("JIT cache hit").
  void note(std::string text) { note_ = std::move(text); }
  // Stops the clock and prints the line (once). Returns the stage's time in milliseconds.
  double end();

 private:
  std::string kernel_, stage_, note_;
  std::chrono::steady_clock::time_point start_;
  int exceptions_;
  bool ended_ = false;
  double ms_ = 0;
};

// f(), timed as stage `stage` of `kernel`.
template <class F>
auto timed(const std::string& kernel, const std::string& stage, F&& f) {
  CompileStage s(kernel, stage);
  return std::forward<F>(f)();
}

}  // namespace tessera::runtime

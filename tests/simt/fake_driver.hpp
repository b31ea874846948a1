// A driver bridge for the CPU tests: made-up device and function limits, a "compiler" that keeps
// the source it was given, modules that hold every function whose entry the source defines, and a
// launch that records what it was asked to run (the argument pack's bytes included).
#pragma once

#include <cstring>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/error.hpp"

#include "tessera/simt/detail/driver_bridge.hpp"

namespace tessera::simt::testing {

class FakeDriver final : public detail::DriverBridge {
 public:
  struct Launch {
    std::string kernel;
    int ordinal = 0;
    void* function = nullptr;
    unsigned grid[3] = {}, block[3] = {};
    size_t dynamic_shared_bytes = 0;
    std::vector<unsigned char> args;
  };

  // A launch's completion as the fake reports it: done when `finished` is set (wait() sets it, as
  // if the GPU finished then), failing with `error` when it is not empty.
  struct Work final : runtime::DeviceWork {
    std::shared_ptr<bool> finished = std::make_shared<bool>(false);
    std::string error;
    bool done() override {
      if (*finished && !error.empty()) throw BackendError(error);
      return *finished;
    }
    void wait() override {
      *finished = true;
      (void)done();
    }
  };

  DeviceLimits device;                             // what device_limits() returns
  std::map<std::string, FunctionLimits> function;  // per entry; default FunctionLimits otherwise
  bool gpu = true;                                 // what usable() says
  std::vector<Launch> launches;
  std::vector<std::string> sources;               // every translation unit compile() was given
  std::map<std::string, index_t> shared_allowed;  // entry -> bytes, from allow_dynamic_shared
  // When set, launches stay pending until waited for (or until *pending.back() is set); else
  // they are done at once.
  bool asynchronous = false;
  std::vector<std::shared_ptr<bool>> pending;
  std::string fail_next;  // the error the next launch's completion reports, if not empty

  bool usable(int, std::string* why) override {
    if (!gpu && why) *why = "the fake driver has no GPU";
    return gpu;
  }
  DeviceLimits device_limits(int ordinal) override {
    DeviceLimits d = device;
    d.ordinal = ordinal;
    return d;
  }
  void* load_module(int, const void* image, size_t bytes, std::string_view) override {
    modules_.emplace_back(static_cast<const char*>(image), bytes);
    return &modules_.back();
  }
  // A function exists when the module's text defines its entry through TESSERA_SIMT_DEFINE.
  void* find_function(void* module, const std::string& entry) override {
    const std::string& text = *static_cast<std::string*>(module);
    const std::string kernel = entry.substr(std::strlen("tessera_simt_"));
    if (text.find("TESSERA_SIMT_DEFINE(" + kernel + ",") == std::string::npos) return nullptr;
    auto [it, inserted] = entries_.emplace(entry, entry);
    return &it->second;
  }
  // Globals by name, in every module (signature records a test plants); none by default.
  std::map<std::string, std::vector<unsigned char>> globals;
  std::optional<std::vector<unsigned char>> read_global(int, void*,
                                                        const std::string& name) override {
    auto it = globals.find(name);
    if (it == globals.end()) return std::nullopt;
    return it->second;
  }
  FunctionLimits function_limits(int, void* f) override {
    auto it = function.find(*static_cast<std::string*>(f));
    return it == function.end() ? FunctionLimits{} : it->second;
  }
  void allow_dynamic_shared(int, void* f, index_t bytes) override {
    shared_allowed[*static_cast<std::string*>(f)] = bytes;
  }
  std::vector<char> compile(int, const std::string& source, const std::string&) override {
    sources.push_back(source);
    return std::vector<char>(source.begin(), source.end());
  }
  std::unique_ptr<runtime::DeviceWork> launch(const detail::LaunchRequest& r) override {
    Launch l;
    l.kernel = std::string(r.kernel);
    l.ordinal = r.ordinal;
    l.function = r.function;
    for (int a = 0; a < 3; ++a) l.grid[a] = r.grid[a], l.block[a] = r.block[a];
    l.dynamic_shared_bytes = r.dynamic_shared_bytes;
    const auto* p = static_cast<const unsigned char*>(r.args);
    l.args.assign(p, p + r.args_bytes);
    launches.push_back(std::move(l));
    if (!asynchronous && fail_next.empty()) return nullptr;
    auto work = std::make_unique<Work>();
    work->error = std::exchange(fail_next, {});
    *work->finished = !asynchronous;
    pending.push_back(work->finished);
    return work;
  }

 private:
  std::list<std::string> modules_;              // stable addresses: a module is its text
  std::map<std::string, std::string> entries_;  // a function is its entry's name
};

}  // namespace tessera::simt::testing

// Errors. User errors (a kernel or a launch that breaks a rule) and internal errors (a bug in
// Tessera) are different types. User messages are whole sentences that say what to do, and point
// at the user's source line when there is one.
#pragma once

#include <cstdint>
#include <source_location>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace tessera {

// Where in the user's code something happened. Every DSL op records one.
struct SourceLoc {
  const char* file = "";
  uint32_t line = 0;
  uint32_t column = 0;

  static constexpr SourceLoc current(std::source_location l = std::source_location::current()) {
    return {l.file_name(), l.line(), l.column()};
  }
  constexpr SourceLoc() = default;
  constexpr SourceLoc(const char* f, uint32_t l, uint32_t c) : file(f), line(l), column(c) {}
  constexpr SourceLoc(std::source_location l)  // NOLINT: implicit on purpose
      : SourceLoc(l.file_name(), l.line(), l.column()) {}
  bool known() const { return line != 0; }
  std::string str() const;  // "file.cpp:12:7"
};

// Base of every error Tessera throws.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Misuse of the host API (wrong shapes, bad device name, ...).
class UsageError : public Error { using Error::Error; };
// A kernel body that breaks a rule of the DSL, found while tracing or verifying it.
class KernelError : public Error { using Error::Error; };
// A broken ownership rule: partitioning a shared handle, a moved-from handle, aliasing.
class OwnershipError : public Error { using Error::Error; };
// A use of a tensor that a graph holds (runtime/graph.hpp) which would break the graph's ownership,
// or a use of capture() that cannot be replayed. An OwnershipError, so code that catches those
// keeps catching it.
class GraphError : public OwnershipError { using OwnershipError::OwnershipError; };
// An access outside a tensor that could not be masked.
class BoundsError : public Error { using Error::Error; };
// A launch that does not fit the kernel or the device.
class LaunchError : public Error { using Error::Error; };
// The error of a launch whose Future was destroyed without sync() or wait() (future.hpp): thrown
// by the next launch on the thread that dropped it, naming the lost launch and its error.
class LostLaunchError : public Error { using Error::Error; };
// A failure of the CUDA driver, NVRTC or the host system.
class BackendError : public Error { using Error::Error; };
// A bug in Tessera itself.
class InternalError : public Error { using Error::Error; };
// Memory that could not be had: a tensor's storage (host or GPU) or a tile on the CPU backend.
// The message names the size and the device. A BackendError, so code that catches those keeps
// catching it.
class OutOfMemoryError : public BackendError { using BackendError::BackendError; };

namespace detail {
template <class... Args>
std::string cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
// "file:line:col: error: message" when the location is known, else the message.
std::string located(const SourceLoc& loc, const std::string& message);
}  // namespace detail

// Throws E with the message built from args, prefixed by loc.
template <class E, class... Args>
[[noreturn]] void fail_at(const SourceLoc& loc, Args&&... args) {
  throw E(detail::located(loc, detail::cat(std::forward<Args>(args)...)));
}
template <class E, class... Args>
[[noreturn]] void fail(Args&&... args) {
  throw E(detail::cat(std::forward<Args>(args)...));
}

#define TESSERA_INTERNAL_CHECK(cond, ...)                                                  \
  do {                                                                                     \
    if (!(cond))                                                                           \
      ::tessera::fail<::tessera::InternalError>("internal error (a bug in Tessera) at ", \
                                                __FILE__, ":", __LINE__,                   \
                                                ": " #cond " " __VA_OPT__(, ) __VA_ARGS__);  \
  } while (0)

}  // namespace tessera

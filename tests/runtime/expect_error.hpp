// Helpers for tests that pin error messages.
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace tessera::test {

// The message of the E that f throws; records a failure and returns "" when f throws nothing.
// (Any other exception escapes and fails the test with its own message.)
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error was thrown";
  return "";
}

// "file:line:col: error: rest" -> "file:line"; "" when the message carries no location.
inline std::string file_and_line(const std::string& message) {
  const size_t error = message.find(": error: ");
  if (error == std::string::npos) return "";
  const std::string loc = message.substr(0, error);
  const size_t column = loc.rfind(':');
  return column == std::string::npos ? "" : loc.substr(0, column);
}

// The text after "error: " (the whole message when it has no location).
inline std::string after_location(const std::string& message) {
  const size_t error = message.find("error: ");
  return error == std::string::npos ? message : message.substr(error + 7);
}

}  // namespace tessera::test

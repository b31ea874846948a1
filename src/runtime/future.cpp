#include "tessera/runtime/future.hpp"

#include <iostream>
#include <string>

namespace tessera {

namespace {

// The errors lost on this thread since they were last thrown: the first one's text, and how many
// more (or ones whose text could not be kept).
struct LostErrors {
  std::string first;
  size_t more = 0;
  bool any() const { return !first.empty() || more != 0; }
  std::string take() {
    std::string m = first.empty() ? "launches failed, and their Futures were destroyed without "
                                    "sync() or wait(), so nobody saw their errors"
                                  : first;
    if (!first.empty() && more != 0)
      m +=
          detail::cat(" (and ", more, " more failed launch", more == 1 ? "" : "es", " lost since)");
    first.clear();
    more = 0;
    return m;
  }
  ~LostErrors();
};
thread_local LostErrors lost;
// Set when `lost` is gone (the thread is ending): a Future destroyed after that (one held by a
// static, say) prints its error instead of keeping it.
thread_local bool lost_gone = false;

LostErrors::~LostErrors() {
  lost_gone = true;
  if (any()) std::cerr << "tessera: at thread exit, a lost launch error: " << take() << "\n";
}

const char* const kRemedy =
    "; call sync() or wait() on every Future to get its error where it happens";

}  // namespace

void check_lost_errors() {
  if (!lost.any()) return;
  throw LostLaunchError(lost.take() + kRemedy);
}

namespace runtime {

void keep_lost_error(const Completion& done) noexcept {
  std::exception_ptr error = done.unseen_error();
  if (!error) return;
  try {
    if (lost_gone) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        std::cerr << "tessera: at exit, a lost launch error: " << done.label()
                  << " failed: " << e.what() << "\n";
      } catch (...) {
      }
      return;
    }
    if (!lost.first.empty()) {
      ++lost.more;
      return;
    }
    std::string what;
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
      what = "an exception that is not a std::exception";
    }
    lost.first = detail::cat("a launch of ", done.label().empty() ? "a kernel" : done.label(),
                             " failed, and its Future was destroyed without sync() or wait(), so "
                             "nobody saw its error: \"",
                             what, "\"");
  } catch (...) {  // no memory for the text: still count it
    if (!lost_gone) ++lost.more;
  }
}

void refuse_launch_if_an_error_was_lost() {
  if (!lost.any()) return;
  throw LostLaunchError(lost.take() +
                        ". This launch was refused before it took its arguments, which the "
                        "caller keeps" +
                        kRemedy);
}

}  // namespace runtime

}  // namespace tessera

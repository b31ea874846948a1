#include "tessera/runtime/future.hpp"

#include <iostream>
#include <string>
#include <vector>

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
  // Chained launches whose outputs this thread freed before they finished
  // (keep_lost_error_later): looked at once they are done.
  std::vector<std::shared_ptr<runtime::Completion>> unfinished;
  // Keeps the errors of the unfinished launches that are done (all of them, waiting, if
  // `block`).
  void collect(bool block) noexcept;
  ~LostErrors();
};
thread_local LostErrors lost;
// Set when `lost` is gone (the thread is ending): a Future destroyed after that (one held by a
// static, say) prints its error instead of keeping it.
thread_local bool lost_gone = false;

void LostErrors::collect(bool block) noexcept {
  std::erase_if(unfinished, [&](const std::shared_ptr<runtime::Completion>& c) {
    if (!block && !c->finished()) return false;
    runtime::keep_lost_error(*c, true);
    return true;
  });
}

LostErrors::~LostErrors() {
  collect(true);
  lost_gone = true;
  if (any()) std::cerr << "tessera: at thread exit, a lost launch error: " << take() << "\n";
}

const char* const kRemedy =
    "; call sync() or wait() on every Future to get its error where it happens";

}  // namespace

void check_lost_errors() {
  lost.collect(true);
  if (!lost.any()) return;
  throw LostLaunchError(lost.take() + kRemedy);
}

namespace runtime {

void keep_lost_error_later(std::shared_ptr<Completion> done) noexcept {
  try {
    if (!lost_gone && !done->finished()) return lost.unfinished.push_back(std::move(done));
  } catch (...) {  // no memory to keep it for later: wait for it now
  }
  keep_lost_error(*done, true);
}

void keep_lost_error(const Completion& done, bool freed) noexcept {
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
                             freed ? " failed, and its Future was chained and the memory it "
                                     "wrote freed unread, so nobody saw its error: \""
                                   : " failed, and its Future was destroyed without sync() or "
                                     "wait(), so nobody saw its error: \"",
                             what, "\"");
  } catch (...) {  // no memory for the text: still count it
    if (!lost_gone) ++lost.more;
  }
}

void refuse_launch_if_an_error_was_lost() {
  if (!lost.unfinished.empty()) lost.collect(false);
  if (!lost.any()) return;
  throw LostLaunchError(lost.take() +
                        ". This launch was refused before it took its arguments, which the "
                        "caller keeps" +
                        kRemedy);
}

}  // namespace runtime

}  // namespace tessera

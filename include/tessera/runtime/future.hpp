// Futures: what a launch returns. A Future owns the launch's arguments until its work is done;
// .sync() waits and hands them back, or throws the launch's own error (errors are per launch:
// a sync() never reports another launch's failure).
//
// An error nobody asked for is not dropped. A destructor may not throw (a Future may die during
// unwinding) and must not end the program, so ~Future waits for the work (it owns the arguments,
// which must outlive it) and, if the work failed and no sync() or wait() has thrown that error
// to anyone, keeps it on the thread that dropped the Future as a LostLaunchError naming the
// launch and quoting its error. That thread's next launch (tile or SIMT) is refused with it
// before it reads or takes any argument: the program learns of the failure at the first point
// where it would build on the lost result, and the refused launch loses nothing (its arguments
// stay with the caller, and running it again works). The thread, not the device or the storage,
// holds it: the thread that dropped the Future is the code that ignored the error, while a
// device-wide error would fail another thread's unrelated launch (or another launch's sync()),
// and the outputs the launch owned died with its Future (it held their only handle), so there is
// no storage left to mark. check_lost_errors() throws it on demand (before shutting down, say);
// a thread that ends still holding one prints it on stderr.
#pragma once

#include <exception>
#include <memory>
#include <utility>

#include "tessera/core/error.hpp"
#include "tessera/runtime/launch.hpp"

namespace tessera {

// Throws the LostLaunchError this thread holds (the first error lost since the last time it was
// thrown, with a count of any others), and forgets it; does nothing if there is none.
void check_lost_errors();

namespace runtime {
// Keeps `done`'s error on this thread if it failed and nobody has seen the error (waits first).
// Never throws: a Future's destructor calls it.
void keep_lost_error(const Completion& done) noexcept;
// At the start of a launch: throws the LostLaunchError this thread holds, saying that the launch
// was refused before it took its arguments.
void refuse_launch_if_an_error_was_lost();
}  // namespace runtime

// Owns a launch's arguments until its work is done. Destroying it waits for the work, and keeps
// an error that nobody asked for (above).
template <class Args>
class [[nodiscard]] Future {
 public:
  Future(Args args, std::shared_ptr<runtime::Completion> done)
      : args_(std::move(args)), done_(std::move(done)) {}
  Future(Future&&) noexcept = default;
  Future& operator=(Future&& other) noexcept {
    if (this != &other) {
      release();
      args_ = std::move(other.args_);
      done_ = std::move(other.done_);
    }
    return *this;
  }
  ~Future() { release(); }

  // Waits, then returns the arguments (partitions, tensors, scalars) in parameter order. Throws
  // the error of the work, if it failed (the arguments are then dropped, once the work is done).
  Args sync() && {
    alive();
    done_->wait();
    done_.reset();
    return std::move(args_);
  }
  // The same future, kept to be waited on later; it keeps owning the arguments.
  Future async() && { return std::move(*this); }
  bool ready() const { return alive().ready(); }
  // Waits; throws the error of the work, if it failed (which then counts as seen).
  void wait() const { alive().wait(); }
  Args get() && { return std::move(*this).sync(); }

 private:
  const runtime::Completion& alive() const {
    if (!done_)
      fail<OwnershipError>(
          "this Future was moved from or already synced, and owns nothing; use "
          "the arguments its sync() returned");
    return *done_;
  }
  void release() noexcept {
    if (done_) runtime::keep_lost_error(*done_);
    done_.reset();
  }

  Args args_;
  std::shared_ptr<runtime::Completion> done_;
};

}  // namespace tessera

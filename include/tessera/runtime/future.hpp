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
#include <tuple>
#include <utility>

#include "tessera/core/error.hpp"
#include "tessera/runtime/launch.hpp"

namespace tessera {

// Throws the LostLaunchError this thread holds (the first error lost since the last time it was
// thrown, with a count of any others), and forgets it; does nothing if there is none.
void check_lost_errors();

namespace runtime {
// Keeps `done`'s error on this thread if it failed and nobody has seen the error (waits first).
// `freed`: the launch's Future was chained, and the error is lost because the memory it wrote
// was freed unread. Never throws: a Future's destructor calls it.
void keep_lost_error(const Completion& done, bool freed = false) noexcept;
// The same for a chained launch whose output is freed while the launch may still run: kept
// without waiting, and looked at (as keep_lost_error(done, true)) once the launch is done, at the
// thread's next launch, or by check_lost_errors(), which waits for it. Never throws.
void keep_lost_error_later(std::shared_ptr<Completion> done) noexcept;
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
  // Hands the arguments back at once, without waiting: the work may still be running. Every
  // later use of them is ordered after it by the runtime, not by the host: a launch that reads
  // or writes them runs after this work (on the CPU backend's workers, or in the device's stream
  // order), a host read (to_vector(), to()) waits for it, and their memory outlives it. So a
  // pipeline is issued back to back:
  //   auto [h, x1] = norm(std::move(hp), x).chain();
  //   auto [y, h1] = gemm(std::move(yp), std::move(h).unpartition()).chain();
  // The ownership rules still hold at each step (an output is still one partition, an input
  // still one more handle). If this work fails, a launch that uses what it wrote fails with a
  // LaunchError that quotes its error, a host read of it throws its error, and if nothing asks,
  // the error is kept as a lost one when the memory it wrote is freed (check_lost_errors()).
  Args chain() && {
    alive();
    done_.reset();  // the storages the work uses keep its completion (tensor_handle.hpp)
    return std::move(args_);
  }
  // Calls f with the arguments at once, as chain() hands them back, and returns what f returns
  // (typically the next launch's Future): f's launches are ordered after this work.
  template <class F>
  auto then(F&& f) && {
    return std::apply(std::forward<F>(f), std::move(*this).chain());
  }
  bool ready() const { return alive().ready(); }
  // Waits; throws the error of the work, if it failed (which then counts as seen).
  void wait() const { alive().wait(); }
  Args get() && { return std::move(*this).sync(); }

 private:
  const runtime::Completion& alive() const {
    if (!done_)
      fail<OwnershipError>(
          "this Future was moved from, synced or chained, and owns nothing; use the "
          "arguments its sync() or chain() returned");
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

// Graphs: a scope of launches captured once and replayed many times (on a GPU, one CUDA graph
// launch per replay instead of one driver launch per kernel).
//
//   Graph g = capture("step", [&] {
//     auto [h, x1] = norm(std::move(hp), x).sync();           // recorded, not run: returns at once
//     auto [y, h1] = gemm(std::move(yp), std::move(h).unpartition()).sync();
//     out = std::move(y).unpartition();
//   });
//   for (int i = 0; i < 100; ++i) g.replay();                 // each replay runs both, in order
//   g.replay().sync();                                         // waits for the last one
//
// What a launch inside capture() returns: the same Future as outside, already finished, with the
// arguments inside it. Nothing has run; sync() and chain() hand the arguments back at once, so the
// scope is written exactly like eager code (an output comes back as a partition, to unpartition()
// and pass on as the next launch's input). The work happens at replay().
//
// What the graph owns: every storage a captured launch reads or writes, until the graph is
// destroyed (like a Future that never finishes). So, while the graph lives:
// - dropping a captured tensor is allowed: the graph keeps its memory, and replays still use it;
// - partition() of a captured tensor, or a launch writing it through a partition kept from the
//   capture, is a GraphError naming the tensor and the graph (the graph writes or reads it on
//   every replay; an output has one owner);
// - reading a captured tensor outside the graph (a launch's input, to_vector()) is ordered after
//   the replays queued before it, and a replay after the work queued before it, by the same
//   per-storage tracking as every launch (docs/async.md), so neither side can race;
// - inside capture(), a host read of what a captured launch writes is a GraphError (nothing has
//   run yet), and so are SIMT launches, nested captures and replays.
// Destroy the graph (or let it go out of scope) to give its tensors back.
#pragma once

#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tessera/core/narrowing.hpp"

#include "tessera/runtime/device.hpp"
#include "tessera/runtime/future.hpp"
#include "tessera/runtime/tensor.hpp"

namespace tessera {

namespace runtime {
class GraphCapture;
}

// What a replay returns: its completion, owning nothing (the graph owns the tensors). Unlike a
// launch's Future, dropping it neither waits nor keeps anything: replays are issued back to back.
// A failed replay is still never silent: it is the pending writer of the graph's outputs, so the
// next replay (which follows it) fails quoting its error, a host read or launch that reads an
// output throws it, and if the outputs are freed unread it is kept as a lost error (future.hpp).
class GraphRun {
 public:
  explicit GraphRun(std::shared_ptr<runtime::Completion> done) : done_(std::move(done)) {}
  GraphRun(GraphRun&&) noexcept = default;
  GraphRun& operator=(GraphRun&& other) noexcept;
  ~GraphRun() { release(); }
  // Waits; throws the error of the first captured launch that failed in this replay (or of the
  // work it was ordered after), which then counts as seen.
  void wait() const;
  // Waits as wait(), and lets go of the replay.
  void sync() &&;
  // Asks, never waits.
  bool ready() const;

 private:
  const runtime::Completion& alive() const;
  void release() noexcept;
  std::shared_ptr<runtime::Completion> done_;
};

class Graph {
 public:
  Graph() = default;  // empty: replays nothing
  Graph(Graph&&) noexcept = default;
  Graph& operator=(Graph&&) noexcept = default;
  ~Graph() = default;  // gives the tensors back; queued replays still finish

  // Runs the captured launches again, in the order they were captured, with the same arguments;
  // returns at once. Ordered after the work queued before it that writes what the graph reads, or
  // reads or writes what it writes (on the CPU by the worker pool, on a GPU by the device), and
  // queued on this thread's stream for the graph's device (runtime/stream.hpp).
  GraphRun replay(std::source_location loc = std::source_location::current()) const;

  // Replaces tensor `captured` (a view the captured launches use) by `replacement` in every one of
  // them, from the next replay on, without capturing again: nothing is traced, checked or
  // compiled again. The replacement has the same dtype, shape and strides, lives on the same
  // device, and is aligned at least as `captured` is (the generated code may rely on it). The graph
  // lets go of `captured`'s storage (it is the caller's again once the replays queued before this
  // call are done with it: the per-storage tracking orders a later write after them) and holds the
  // replacement's. If the graph writes `captured`, nothing else may write the replacement: it may
  // not be held by another graph, nor have had its address handed out (unchecked_data()). A
  // GraphError (naming the tensor and the graph) when any of this does not hold; the graph is then
  // unchanged. On a GPU the instantiated CUDA graph is updated in place with the new addresses
  // (replays already queued run as they were); built again only if the driver refuses that.
  template <Element T, int R>
  void rebind(const Tensor<T, R>& captured, const Tensor<T, R>& replacement,
              std::source_location loc = std::source_location::current()) {
    rebind_handle(runtime::HandleAccess::of(captured), runtime::HandleAccess::of(replacement), loc);
  }

  // Sets scalar parameter `param` of every captured launch of `kernel` to `value`, from the next
  // replay on, without capturing again. The value must be one the parameter's type holds, as at a
  // launch (core/narrowing.hpp): a LaunchError naming the kernel, parameter and value otherwise. A
  // GraphError if no captured launch of a kernel of that name has a scalar parameter `param`.
  // (Matched by the kernel's name: every instantiation of a kernel template shares it.)
  template <class K, class V>
  requires std::is_arithmetic_v<V>
  void rebind(const K& kernel, std::string_view param, V value,
              std::source_location loc = std::source_location::current()) {
    const bool integral = std::is_integral_v<V> && !(std::is_unsigned_v<V> && sizeof(V) == 8);
    rebind_scalar(kernel.name(), param, integral, integral ? static_cast<int64_t>(value) : 0,
                  static_cast<double>(value), value_text_of(value), loc);
  }

  bool empty() const { return state_ == nullptr; }
  // How many launches were captured.
  size_t launches() const;
  // "graph 'step' (captured at step.cpp:12:3)".
  const std::string& label() const;

  struct State;  // src/runtime/graph.cpp

 private:
  friend class runtime::GraphCapture;
  explicit Graph(std::shared_ptr<State> state) : state_(std::move(state)) {}
  void rebind_handle(const runtime::TensorHandle& captured,
                     const runtime::TensorHandle& replacement, SourceLoc loc);
  void rebind_scalar(std::string_view kernel, std::string_view param, bool integral, int64_t ivalue,
                     double value, const std::string& text, SourceLoc loc);
  std::shared_ptr<State> state_;
};

namespace runtime {
// The non-template core of capture(): while it lives, this thread's launches are recorded into a
// new graph instead of running. finish() ends the capture and returns the graph (on a GPU, it is
// built and instantiated there: a BackendError if the driver refuses). Destroyed without
// finish() (the scope threw), the capture is dropped with everything it held.
class GraphCapture {
 public:
  GraphCapture(std::string name, SourceLoc loc);
  ~GraphCapture();
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;
  Graph finish();

 private:
  std::shared_ptr<Graph::State> state_;
};
}  // namespace runtime

// Captures the launches `body` makes on this thread into a graph named `name` (for errors).
template <class F>
Graph capture(std::string name, F&& body,
              std::source_location loc = std::source_location::current()) {
  runtime::GraphCapture c(std::move(name), loc);
  std::forward<F>(body)();
  return c.finish();
}
template <class F>
Graph capture(F&& body, std::source_location loc = std::source_location::current()) {
  return capture(std::string(), std::forward<F>(body), loc);
}

}  // namespace tessera

// The autotuner: a kernel declares candidate configurations (instantiations of one kernel with
// other template parameters: tile shapes, K step, ...), and the first launch for a key (the
// device's architecture, the arguments' dtypes and a shape bucket) times them and remembers the
// fastest in the JIT cache folder; later launches, and later processes, launch it with no timing.
//
//   template <int BM, int BN, int BK>
//   TESSERA_KERNEL(gemm, Out<float> c, In<half> a, In<half> b) { ... };
//
//   const auto gemm_tuned = tune::candidates(
//       "examples.gemm", tune::config("64x64x32", gemm<64, 64, 32>, {64, 64}),
//       tune::config("128x128x32", gemm<128, 128, 32>, {128, 128}));
//   auto [c1, a1, b1] = gemm_tuned(std::move(c), a, b).sync();  // c: the output Tensor
//
// A call is a kernel call whose output is passed as a Tensor, moved in: each configuration names
// the tile its output is partitioned with, and the tuner partitions it. It returns the Future of
// the winner's launch, which owns the arguments as any launch's does (the output as a partition
// cut with the winner's tile; unpartition() it).
//
// What timing does to the arguments, and why the result can be trusted:
//  - Every candidate writes the caller's own output tensor, in turn: no second output is made
//    (its memory might not fit) and no output is shared, since each launch takes the tensor's
//    only handle (partitioned with its tile) and hands it back before the next one takes it. Each
//    launch owns its arguments like any launch; inputs are read-only, so every candidate reads the
//    same values.
//  - Timing is time_steps, the core of time_launches (tessera/timing.hpp): warm-up, rounds, the
//    median round; each step is one launch of the candidate and its wait.
//  - The result the caller gets is a whole launch of the winner, started after the timing: what a
//    losing candidate left in the output is overwritten in full (every tile of an output is
//    stored by its launch).
//  - A candidate whose launch is refused before it starts (a kernel error while tracing, an NVRTC
//    compile error, more shared memory than the device has, a tile the output cannot be cut
//    into) is skipped, with the reason under TESSERA_LOG=tune, and never chosen; the output is
//    untouched (a refused launch takes nothing). When every candidate is refused the call throws
//    a LaunchError listing them, and the caller keeps its output. A candidate that fails while it
//    runs (a device fault, an unpadded load out of bounds) fails the call with its error, and the
//    output is lost with it, as with any failed launch.
//  - A stored record that cannot be read, or that was made for another list of candidates
//    (stale), is ignored with a note under TESSERA_LOG=tune, and the candidates are timed again.
//
// TESSERA_TUNE=off launches a stored winner if there is one, else the first candidate, untimed;
// TESSERA_TUNE=force times again even when a winner is stored (once a key in the process, then
// its winner). TESSERA_LOG=tune shows each candidate's time, what was picked and what was reused.
//
// Inside capture() (runtime/graph.hpp) a launch is recorded, not run, so nothing can be timed: a
// tuned call whose key has no winner yet, and would be timed, is refused there with a GraphError
// (the caller keeps its output). Make the call once before capturing, with the same shape
// buckets; a key with a winner records the winner's one launch, and an untimed call (TESSERA_TUNE=
// off, or the CPU backend with time_on_cpu false) its first candidate's.
//
// Limits: a tuned kernel has exactly one Out parameter; the tuner's name must be unique in the
// program (it names the record on disk); a candidate's name holds no ',' or line break.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/runtime/kernel.hpp"
#include "tessera/timing.hpp"

namespace tessera::tune {

// How candidates are timed.
struct Options {
  // Shorter than time_launches' defaults: tuning happens on a first launch, while the program
  // waits.
  TimingOptions timing{.rounds = 5, .warmup_rounds = 1, .round_ms = 10};
  // On the CPU backend the interpreter's times say little about a GPU's: false launches the
  // first candidate there, untimed (and stores nothing).
  bool time_on_cpu = true;
};

// What the tuner did in this process (tests, benchmarks).
struct Stats {
  uint64_t tunings = 0;  // keys whose candidates were timed
  uint64_t candidates_timed = 0;
  uint64_t candidates_skipped = 0;  // refused before they started
  uint64_t disk_hits = 0;           // winners read from the cache folder
  uint64_t memory_hits = 0;         // winners found in this process's table
  uint64_t records_ignored = 0;     // unreadable or stale records
};
Stats stats();
// Forgets the winners this process knows (not the cache folder): the next launch of each key
// reads the folder again (tests).
void forget();

}  // namespace tessera::tune

namespace tessera::runtime::tune {

// One candidate's outcome, for pick().
struct Trial {
  std::string name;
  double ms = -1;       // the median time per launch; < 0 when skipped
  std::string skipped;  // why it was skipped
};

// The non-template core of a tuned launch (src/runtime/tune.cpp).
class Table {
 public:
  // `name`: the tuner's; `names`: its candidates (checked: unique, no ',' or line break).
  Table(std::string name, std::vector<std::string> names);
  // The winner for `key` on `device`: from this process's table, else from the cache folder;
  // -1 when there is none yet. A stale or unreadable record is ignored with a note. `disk` false,
  // or TESSERA_TUNE=force: this process's table only.
  int find(Device device, const std::string& key, bool disk = true) const;
  // A GraphError when this thread is inside capture(): `key` has no winner, and timing its
  // candidates needs launches that run and are waited for.
  void refuse_timing_in_capture(Device device, const std::string& key) const;
  // Remembers the fastest timed trial (this process, cache folder), logs every trial, and returns
  // its index; throws LaunchError when every candidate was skipped.
  int pick(Device device, const std::string& key, const std::vector<Trial>& trials,
           SourceLoc call) const;
  // One tuning at a time in a process: two threads tuning at once would time each other.
  static std::unique_lock<std::mutex> lock();
  // Whether candidates are timed for a key without a winner: not under TESSERA_TUNE=off, nor on
  // the CPU when !time_on_cpu.
  static bool timing_allowed(Device device, bool time_on_cpu);
  // The JIT cache key of the record for `key` on `device`.
  std::string record_key(Device device, const std::string& key) const;
  static void log(const std::string& line);
  static bool logging();
  // Logs candidate `index` skipped for `key` on `device`, and why.
  void note_skipped(Device device, const std::string& key, size_t index,
                    const std::string& why) const;
  const std::vector<std::string>& names() const { return names_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<std::string> names_;
  std::string joined_;  // names_ joined with ','
};

// The default key's text for one tensor: "f16[4096,2048]", each extent rounded up to a power of
// two (a shape bucket: shapes in one bucket share a winner).
void append_bucket(std::string& key, DType dtype, const Shape& shape);

}  // namespace tessera::runtime::tune

namespace tessera::tune {

// One candidate: a kernel instantiation and the tile its output is partitioned with.
template <class K>
struct Config {
  std::string name;
  K kernel;
  Shape tile;
};
template <class K>
Config<K> config(std::string name, K kernel, Shape tile) {
  return {std::move(name), kernel, std::move(tile)};
}

// The default key: the dtype and the shape bucket of each tensor argument (scalars do not count).
struct ShapeBucket {
  template <class... A>
  std::string operator()(const A&... args) const {
    std::string key;
    (add(key, args), ...);
    return key;
  }

 private:
  template <class A>
  static void add(std::string& key, const A& a) {
    if constexpr (runtime::HostArg<A>::tensor)
      runtime::tune::append_bucket(key, a.dtype(), a.shape());
  }
};

template <class Key, class... K>
class Candidates {
  static_assert(sizeof...(K) > 0, "tune::candidates: give at least one configuration");
  using K0 = std::tuple_element_t<0, std::tuple<K...>>;
  using Params = typename K0::Params;
  static_assert((std::is_same_v<typename K::Params, Params> && ...),
                "tune::candidates: every configuration must be the same kernel's parameters "
                "(instantiations of one kernel with other template arguments)");
  static constexpr size_t arity = std::tuple_size_v<Params>;

  template <size_t... I>
  static constexpr size_t out_count(std::index_sequence<I...>) {
    return ((runtime::ParamTraits<std::tuple_element_t<I, Params>>::kind == ir::ParamKind::Out
                 ? 1
                 : 0) +
            ... + 0);
  }
  template <size_t... I>
  static constexpr size_t out_index(std::index_sequence<I...>) {
    size_t at = 0;
    ((runtime::ParamTraits<std::tuple_element_t<I, Params>>::kind == ir::ParamKind::Out
          ? (at = I, 0)
          : 0),
     ...);
    return at;
  }
  static_assert(out_count(std::make_index_sequence<arity>{}) == 1,
                "tune::candidates: a tuned kernel has exactly one Out parameter");
  static constexpr size_t O = out_index(std::make_index_sequence<arity>{});
  using OutParam = std::tuple_element_t<O, Params>;
  using OutElement = typename runtime::ParamTraits<OutParam>::element;

 public:
  Candidates(std::string name, Key key, Options options, Config<K>... configs)
      : table_(std::move(name), {configs.name...}),
        key_(std::move(key)),
        options_(options),
        configs_(std::move(configs)...) {}

  // The same candidates with another key function, called with the launch's arguments as
  // given (the output as a Tensor) and returning a string.
  template <class Key2>
  Candidates<Key2, K...> with_key(Key2 key) const {
    return with(std::move(key), options_, std::index_sequence_for<K...>{});
  }
  Candidates with_options(Options options) const {
    return with(key_, options, std::index_sequence_for<K...>{});
  }

  // Launches the winner for these arguments (timing the candidates first if the key has none).
  template <class... Args>
  auto operator()(Args&&... args) const {
    static_assert(sizeof...(Args) == arity,
                  "wrong number of arguments for this tuned kernel: pass one per kernel parameter");
    using Out = std::remove_cvref_t<std::tuple_element_t<O, std::tuple<Args...>>>;
    static_assert(
        runtime::HostArg<Out>::tensor &&
            std::is_rvalue_reference_v<std::tuple_element_t<O, std::tuple<Args&&...>>> &&
            !std::is_const_v<std::remove_reference_t<std::tuple_element_t<O, std::tuple<Args...>>>>,
        "a tuned kernel's output is a Tensor moved in, std::move(t): each candidate "
        "partitions it with its own tile");
    auto refs = std::forward_as_tuple(args...);
    Out& out = std::get<O>(refs);
    const Device device = out.device();
    const std::string key = key_(std::as_const(args)...);
    int winner = table_.find(device, key);
    if (winner < 0 && !runtime::tune::Table::timing_allowed(device, options_.time_on_cpu))
      winner = 0;
    if (winner < 0) {
      const auto lock = runtime::tune::Table::lock();
      winner = table_.find(device, key, false);  // another thread may have tuned it meanwhile
      if (winner < 0) {
        table_.refuse_timing_in_capture(device, key);
        winner = time_all(device, key, out, refs);
      }
    }
    return launch_final(static_cast<size_t>(winner), out, refs);
  }

  const std::string& name() const { return table_.name(); }
  // The JIT cache key of the stored record for launch key `key` (from the key function) on
  // `device`: for tools and tests.
  std::string record_key(Device device, const std::string& key) const {
    return table_.record_key(device, key);
  }

 private:
  template <class Key2, class... K2>
  friend class Candidates;

  template <class Key2, size_t... C>
  Candidates<Key2, K...> with(Key2 key, Options options, std::index_sequence<C...>) const {
    return Candidates<Key2, K...>(table_, std::move(key), options, std::get<C>(configs_)...);
  }
  Candidates(runtime::tune::Table table, Key key, Options options, Config<K>... configs)
      : table_(std::move(table)),
        key_(std::move(key)),
        options_(options),
        configs_(std::move(configs)...) {}

  // Argument I of candidate C's launch: the output's partition, or the caller's argument as the
  // caller passed it (a kernel copies what it keeps of an input or a scalar).
  template <size_t I, class P, class Refs>
  static decltype(auto) pick(P& part, Refs& refs) {
    if constexpr (I == O)
      return std::move(part);
    else
      return std::as_const(std::get<I>(refs));
  }
  template <size_t C, class P, class Refs, size_t... I>
  auto call(P& part, Refs& refs, std::index_sequence<I...>) const {
    return std::get<C>(configs_).kernel(pick<I>(part, refs)...);
  }
  // Candidate `c`'s launch, taking the output's partition `part` (moved into the launch). A
  // launch refused before it starts leaves `part` intact (kernel.hpp), for the next candidate.
  template <class P, class Refs>
  auto launch(size_t c, P& part, Refs& refs) const {
    using Result = decltype(call<0>(part, refs, std::make_index_sequence<arity>{}));
    return visit<Result>(c, [&]<size_t C>(std::integral_constant<size_t, C>) {
      return call<C>(part, refs, std::make_index_sequence<arity>{});
    });
  }
  template <class Result, class F>
  static Result visit(size_t c, F&& f) {
    return visit_impl<Result>(c, f, std::index_sequence_for<K...>{});
  }
  template <class Result, class F, size_t... C>
  static Result visit_impl(size_t c, F& f, std::index_sequence<C...>) {
    std::optional<Result> r;
    ((c == C ? (void)r.emplace(f(std::integral_constant<size_t, C>{})) : (void)0), ...);
    return std::move(*r);
  }
  const Shape& tile(size_t c) const {
    const Shape* t = nullptr;
    visit_tiles(c, t, std::index_sequence_for<K...>{});
    return *t;
  }
  template <size_t... C>
  void visit_tiles(size_t c, const Shape*& t, std::index_sequence<C...>) const {
    ((c == C ? (void)(t = &std::get<C>(configs_).tile) : (void)0), ...);
  }

  template <class Out, class Refs>
  auto launch_final(size_t c, Out& out, Refs& refs) const {
    auto part = std::move(out).partition(tile(c));
    try {
      return launch(c, part, refs);
    } catch (...) {
      out = std::move(part).unpartition();  // refused: the caller keeps its output
      throw;
    }
  }

  // Times every candidate on the caller's output, in turn; returns the winner's index.
  template <class Out, class Refs>
  int time_all(Device device, const std::string& key, Out& out, Refs& refs) const {
    using Part = decltype(std::move(out).partition(Shape{}));
    std::vector<runtime::tune::Trial> trials;
    for (size_t c = 0; c < sizeof...(K); ++c) {
      runtime::tune::Trial& trial = trials.emplace_back();
      trial.name = table_.names()[c];
      std::optional<Part> part;
      try {
        part.emplace(std::move(out).partition(tile(c)));
      } catch (const Error& e) {  // a tile this output cannot be cut into; `out` is intact
        trial.skipped = e.what();
        table_.note_skipped(device, key, c, trial.skipped);
        continue;
      }
      // The first launch traces and compiles: a candidate that cannot be built is refused here,
      // before it takes the output.
      using Pending = decltype(launch(c, *part, refs));
      std::optional<Pending> first;
      try {
        first.emplace(launch(c, *part, refs));
      } catch (const Error& e) {
        out = std::move(*part).unpartition();
        trial.skipped = e.what();
        table_.note_skipped(device, key, c, trial.skipped);
        continue;
      }
      // The work's own failure propagates, as any launch's.
      part.emplace(std::get<O>(std::move(*first).sync()));
      // Each timed step is one launch and its wait. (A ring of one output in flight, as
      // time_launches runs it, lets a launch started at the end of one round finish before the
      // next round's clock starts when the host is descheduled in between, and a round of one
      // launch then reads as nearly free: measured on a loaded CPU, 0.015 ms for a 5 ms launch.)
      const Timing t = runtime::timing::time_steps(
          [&] { part.emplace(std::get<O>(launch(c, *part, refs).sync())); }, device,
          options_.timing);
      trial.ms = t.median_ms;
      out = std::move(*part).unpartition();
    }
    return table_.pick(device, key, trials, SourceLoc::current());
  }

  runtime::tune::Table table_;
  Key key_;
  Options options_;
  std::tuple<Config<K>...> configs_;
};

// A tuner named `name` (unique in the program: it names the record on disk) over `configs`,
// keyed by ShapeBucket; .with_key(f) and .with_options(o) change either.
template <class... K>
Candidates<ShapeBucket, K...> candidates(std::string name, Config<K>... configs) {
  return Candidates<ShapeBucket, K...>(std::move(name), ShapeBucket{}, Options{},
                                       std::move(configs)...);
}

}  // namespace tessera::tune

// Graphs (runtime/graph.hpp): launches captured once and replayed, in order, each time; the graph
// holds every tensor it touches until it is destroyed, and each attempt to break that through the
// graph -- writing or re-partitioning a tensor it holds, a partition kept from the capture, a host
// read of what it has not computed yet, nesting -- is pinned to its GraphError, each with a twin
// that runs. Uses that are made safe by ordering (a replay after pending work of another stream,
// reads outside the graph between replays, replays from two threads, dropping captured tensors)
// are checked by their results.
//
// Built twice from this source: runtime_tests on the CPU backend (the worker pool is held while a
// test issues, so ordering is tested with real concurrency), and graph_gpu_tests on GPU cuda:0
// (TESSERA_GRAPH_TEST_GPU; each test skips without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/runtime/graph.hpp>
#include <tessera/runtime/stream.hpp>
#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"
#ifdef TESSERA_GRAPH_TEST_GPU
#include "runtime/gpu_graph.hpp"  // gpu_graph_counts()
#endif
#ifndef TESSERA_GRAPH_TEST_GPU
#include "runtime/cpu_queue.hpp"
#endif

namespace tessera::test {
namespace {

using namespace tessera::tile;

#ifdef TESSERA_GRAPH_TEST_GPU
#define GRAPH_TEST(suite, name) TEST(Gpu##suite, name)
#define SKIP_WITHOUT_DEVICE()                            \
  do {                                                   \
    std::string why;                                     \
    if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why; \
  } while (0)
Device dev() {
  return Device::cuda(0);
}
// The GPU orders by its streams: nothing to hold.
struct Hold {
  ~Hold() {}  // NOLINT: a type with a destructor is not an unused variable
};
#else
#define GRAPH_TEST(suite, name) TEST(suite, name)
#define SKIP_WITHOUT_DEVICE() \
  do {                        \
  } while (0)
Device dev() {
  return Device::cpu();
}
// The CPU workers start nothing while it lives: what is issued meanwhile is all queued first.
using Hold = runtime::CpuQueueHold;
#endif

TESSERA_KERNEL(graph_plus_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};
TESSERA_KERNEL(graph_twice, Out<float> z, In<float> x) {
  z.store(load_like(x, z) * 2.0f);
};
TESSERA_KERNEL(graph_copy, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};
TESSERA_KERNEL(graph_set_to, Out<float> z, Scalar<float> v) {
  z.store(Tile<float>::full(z.shape(), 0.0f) + v);
};
// The last block reads past the end of x, unpadded.
constexpr int kNextTileLoadLine = __LINE__ + 2;  // where the load is (clang-format keeps it)
TESSERA_KERNEL(graph_next_tile, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(0) + 1}, {64}, Pad::none()));
};

// The same unpadded load, inside x: a kernel with an error report that reports nothing.
TESSERA_KERNEL(graph_same_tile, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(0)}, {64}, Pad::none()));
};

// Large enough that a replay takes a while on the interpreter: one that ran before what it must
// follow had finished would read or leave a mix.
constexpr int64_t kN = 1 << 16;

std::vector<float> all(float v) {
  return std::vector<float>(kN, v);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A graph that adds one to `y` at each replay: t = y + 1, then y = t. The second launch writes
// what the first read, so the capture re-partitions a tensor the graph already holds.
Graph counter(Tensor<float, 1>& y, std::string name = "count") {
  Tensor<float, 1> t = zeros<float>({kN}, dev());
  return capture(std::move(name), [&] {
    auto [tp, y1] = graph_plus_one(std::move(t).partition({64}), y).sync();
    y = Tensor<float, 1>();  // an input is passed as one more handle: drop the caller's
    auto [yp, t1] = graph_copy(std::move(y1).partition({64}), std::move(tp).unpartition()).sync();
    y = std::move(yp).unpartition();
  });
}

GRAPH_TEST(Graph, CaptureRunsNothingAndEachReplayRunsTheLaunchesInOrder) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y = zeros<float>({kN}, dev());
  Graph g = counter(y);
  EXPECT_EQ(g.launches(), 2u);
  EXPECT_TRUE(contains(g.label(), "graph 'count' (captured at "));
  EXPECT_EQ(y.to_vector(), all(0.0f));  // captured, not run
  for (int i = 0; i < 3; ++i) g.replay();
  EXPECT_EQ(y.to_vector(), all(3.0f));  // a host read waits for the last replay
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(4.0f));
}

GRAPH_TEST(Graph, ReplaysAreQueuedWithoutHostWaits) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y = zeros<float>({kN}, dev());
  Graph g = counter(y);
  std::optional<GraphRun> last;
  {
    Hold hold;
    for (int i = 0; i < 4; ++i) last.emplace(g.replay());
  }
  std::move(*last).sync();
  EXPECT_EQ(y.to_vector(), all(4.0f));
}

GRAPH_TEST(Graph, ScalarsAreCapturedWithTheirValues) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y;
  Graph g = capture([&] {
    auto [yp, v] = graph_set_to(zeros<float>({kN}, dev()).partition({64}), 5.0f).sync();
    y = std::move(yp).unpartition();
  });
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(5.0f));
}

GRAPH_TEST(Graph, ReplaysFromTwoThreadsAreOrderedByTheStoragesTheyShare) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y = zeros<float>({kN}, dev());
  Graph g = counter(y);
  auto replays = [&] {
    for (int i = 0; i < 20; ++i) g.replay();
  };
  std::thread a(replays), b(replays);
  a.join();
  b.join();
  EXPECT_EQ(y.to_vector(), all(40.0f));
}

GRAPH_TEST(Graph, ALaunchOutsideTheGraphReadsTheReplayBeforeItAndTheNextReplayWaitsForIt) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y = zeros<float>({kN}, dev());
  Graph g = counter(y);
  std::optional<decltype(graph_twice(zeros<float>({kN}, dev()).partition({64}), y))> read;
  {
    Hold hold;
    g.replay();                                                               // y = 1
    read.emplace(graph_twice(zeros<float>({kN}, dev()).partition({64}), y));  // reads y = 1
    g.replay();  // y = 2, after the read (write after read)
  }
  auto [z, y1] = std::move(*read).sync();
  EXPECT_EQ(std::move(z).unpartition().to_vector(), all(2.0f));
  EXPECT_EQ(y.to_vector(), all(2.0f));
}

GRAPH_TEST(Graph, AReplayAfterPendingWorkOfAnotherStreamRunsAfterIt) {
  SKIP_WITHOUT_DEVICE();
  const Stream producer(dev()), consumer(dev());
  Tensor<float, 1> x, y;
  Graph g;
  std::optional<GraphRun> run;
  {
    Hold hold;
    {
      const StreamScope on(producer);
      auto [xp, v] = graph_set_to(zeros<float>({kN}, dev()).partition({64}), 3.0f).chain();
      x = std::move(xp).unpartition();  // pending: the workers are held
    }
    const StreamScope on(consumer);
    // Captured while x is still being written: the capture records, and the replay follows x's
    // writer, on the device.
    g = capture([&] {
      auto [yp, x1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), x).sync();
      y = std::move(yp).unpartition();
    });
    run.emplace(g.replay());
  }
  std::move(*run).sync();
  EXPECT_EQ(y.to_vector(), all(6.0f));
}

GRAPH_TEST(Graph, ReplaysStillReadCapturedTensorsTheCallerDropped) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> x = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> y;
  Graph g = capture([&] {
    auto [yp, x1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), std::move(x)).sync();
    y = std::move(yp).unpartition();
  });
  x = Tensor<float, 1>();  // the caller's last handle: the graph holds the storage
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(8.0f));
}

// Views (a slice at an offset into a larger tensor, as an engine splits a fused projection's
// output): the graph holds the storage behind them, whichever handle goes last, and is destroyed
// cleanly after its tensors.
GRAPH_TEST(Graph, ReplaysReadViewsOfTensorsTheCallerDropped) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y, z;
  std::optional<Graph> g;
  {
    Tensor<float, 1> both = full<float>({2 * kN}, 3.0f, dev());
    const Tensor<float, 1> low = both.slice(0, 0, kN), high = both.slice(0, kN, 2 * kN);
    g.emplace(capture([&] {
      auto [yp, l1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), low).sync();
      auto [zp, h1] = graph_plus_one(zeros<float>({kN}, dev()).partition({64}), high).sync();
      y = std::move(yp).unpartition();
      z = std::move(zp).unpartition();
    }));
  }  // the caller's handles to `both` and its two views are gone
  g->replay().sync();
  EXPECT_EQ(y.to_vector(), all(6.0f));
  EXPECT_EQ(z.to_vector(), all(4.0f));
  g.reset();  // the graph goes first, then its outputs
  EXPECT_EQ(y.to_vector(), all(6.0f));
}

GRAPH_TEST(Graph, DestroyingTheGraphWhileAReplayIsPendingLetsTheReplayFinish) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y;
  {
    Tensor<float, 1> x = full<float>({kN}, 4.0f, dev());
    Graph g = capture([&] {
      auto [yp, x1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), std::move(x)).sync();
      y = std::move(yp).unpartition();
    });
    Hold hold;
    g.replay();   // dropped at once: a GraphRun does not wait
    g = Graph();  // x's memory (held only by the graph) is freed behind the replay
  }
  EXPECT_EQ(y.to_vector(), all(8.0f));
}

GRAPH_TEST(Graph, IssuingAReplayOfEightLaunchesCostsTheHostLessThanIssuingTheEight) {
  SKIP_WITHOUT_DEVICE();
  using Clock = std::chrono::steady_clock;
  // Eight dependent launches over two buffers, ping-pong.
  auto eight = [](Tensor<float, 1>& cur, Partition<float, 1>& spare) {
    for (int i = 0; i < 8; ++i) {
      auto f = graph_plus_one(std::move(spare), cur);
      cur = Tensor<float, 1>();
      auto [out, in] = std::move(f).chain();
      spare = std::move(in).partition({1024});
      cur = std::move(out).unpartition();
    }
  };
  Tensor<float, 1> cur = ones<float>({1024}, dev()), gcur = ones<float>({1024}, dev());
  Partition<float, 1> spare = zeros<float>({1024}, dev()).partition({1024});
  Partition<float, 1> gspare = zeros<float>({1024}, dev()).partition({1024});
  Graph g = capture([&] { eight(gcur, gspare); });
  // The fastest of the rounds: a busy machine (or a sanitizer) preempts some of them.
  constexpr int kRounds = 50;
  double launches_s = 1e9, replays_s = 1e9;  // host time in the calls that issue the work
  for (int r = 0; r < kRounds; ++r) {
    auto t0 = Clock::now();
    eight(cur, spare);
    launches_s = std::min(launches_s, std::chrono::duration<double>(Clock::now() - t0).count());
    (void)cur.to_vector();
    t0 = Clock::now();
    GraphRun run = g.replay();
    replays_s = std::min(replays_s, std::chrono::duration<double>(Clock::now() - t0).count());
    std::move(run).sync();
  }
  EXPECT_EQ(cur.to_vector(), std::vector<float>(1024, 1.0f + 8 * kRounds));
  EXPECT_EQ(gcur.to_vector(), std::vector<float>(1024, 1.0f + 8 * kRounds));
  std::printf(
      "host time to issue 8 dependent launches: %.2f us; one replay of them: %.2f us "
      "(the fastest of %d rounds)\n",
      launches_s * 1e6, replays_s * 1e6, kRounds);
  EXPECT_LT(replays_s, launches_s);
}

// ---- rebinding ------------------------------------------------------------------------------

GRAPH_TEST(GraphRebind, AnInputAndAnOutputAreReplacedWithoutCapturingAgain) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> a = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> b = full<float>({kN}, 10.0f, dev());
  Tensor<float, 1> y;
  Graph g = capture("scale", [&] {
    auto [yp, a1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), a).sync();
    y = std::move(yp).unpartition();
  });
  g.replay();
  g.rebind(a, b);  // later replays read b
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(20.0f));
  Tensor<float, 1> y2 = zeros<float>({kN}, dev());
  g.rebind(y, y2);  // and write y2
  g.replay().sync();
  EXPECT_EQ(y2.to_vector(), all(20.0f));
  // What the graph let go of is the caller's again: a and y may be written.
  auto [ap, v] = graph_set_to(std::move(a).partition({64}), 1.0f).sync();
  auto [yp, v2] = graph_set_to(std::move(y).partition({64}), 2.0f).sync();
  EXPECT_EQ(std::move(yp).unpartition().to_vector(), all(2.0f));
  g.replay().sync();  // still b -> y2
  EXPECT_EQ(y2.to_vector(), all(20.0f));
}

GRAPH_TEST(GraphRebind, AReplayQueuedBeforeARebindReadsTheOldTensorBeforeItIsOverwritten) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> a = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> b = full<float>({kN}, 10.0f, dev());
  Tensor<float, 1> y;
  Graph g = capture([&] {
    auto [yp, a1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), a).sync();
    y = std::move(yp).unpartition();
  });
  std::optional<GraphRun> first;
  std::optional<decltype(graph_set_to(std::move(a).partition({64}), 99.0f))> overwrite;
  {
    Hold hold;
    first.emplace(g.replay());  // reads a = 4
    g.rebind(a, b);
    // a is the caller's again, and its write runs after the queued replay's read.
    overwrite.emplace(graph_set_to(std::move(a).partition({64}), 99.0f));
  }
  std::move(*first).sync();
  EXPECT_EQ(y.to_vector(), all(8.0f));
  auto [ap, v] = std::move(*overwrite).sync();
  EXPECT_EQ(std::move(ap).unpartition().to_vector(), all(99.0f));
}

GRAPH_TEST(GraphRebind, ARebindThatWouldChangeTheCompiledLaunchesIsRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> a = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> y;
  Graph g = capture("scale", [&] {
    auto [yp, a1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), a).sync();
    y = std::move(yp).unpartition();
  });
  const Tensor<float, 1> shorter = full<float>({kN / 2}, 1.0f, dev());
  const std::string shape = error_of<GraphError>([&] { g.rebind(a, shorter); });
  EXPECT_TRUE(contains(shape, "rebind() of a tensor that graph 'scale' (captured at ")) << shape;
  EXPECT_TRUE(contains(shape, "the replacement is a f32 tensor of shape [32768]")) << shape;
  const Tensor<float, 1> stranger = full<float>({kN}, 1.0f, dev());
  const std::string unknown = error_of<GraphError>([&] { g.rebind(stranger, a); });
  EXPECT_TRUE(contains(unknown, "has no captured launch that uses this tensor")) << unknown;
  const std::string same_graph = error_of<GraphError>([&] { g.rebind(a, y); });
  EXPECT_TRUE(contains(same_graph, "is already used by the graph")) << same_graph;
  // An output rebound to a tensor another graph holds would be written by two owners.
  Tensor<float, 1> other_input = full<float>({kN}, 3.0f, dev());
  Tensor<float, 1> other_out;
  Graph other = capture("other", [&] {
    auto [op, i1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), other_input).sync();
    other_out = std::move(op).unpartition();
  });
  const std::string owned = error_of<GraphError>([&] { g.rebind(y, other_input); });
  EXPECT_TRUE(contains(owned, "is held by graph 'other' (captured at ")) << owned;
  // The twins: reading what another graph holds is fine, and the refused rebinds changed nothing.
  g.rebind(a, other_out);
  other.replay();
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(12.0f));
}

GRAPH_TEST(GraphRebind, AScalarIsSetForLaterReplaysAndAValueItsTypeCannotHoldIsRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y;
  Graph g = capture("fill", [&] {
    auto [yp, v] = graph_set_to(zeros<float>({kN}, dev()).partition({64}), 5.0f).sync();
    y = std::move(yp).unpartition();
  });
  g.replay();
  g.rebind(graph_set_to, "v", 7);  // an int that a float holds
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(7.0f));
  const std::string wide = error_of<LaunchError>([&] { g.rebind(graph_set_to, "v", 1e300); });
  EXPECT_TRUE(contains(wide, "rebind() of graph 'fill' (captured at ")) << wide;
  EXPECT_TRUE(contains(wide, ": scalar 'v' of kernel 'graph_set_to' would be ")) << wide;
  const std::string unknown = error_of<GraphError>([&] { g.rebind(graph_set_to, "value", 1.0f); });
  EXPECT_TRUE(contains(unknown,
                       "has no captured launch of kernel 'graph_set_to' with a scalar "
                       "parameter 'value'"))
      << unknown;
  const std::string other = error_of<GraphError>([&] { g.rebind(graph_twice, "v", 1.0f); });
  EXPECT_TRUE(contains(other, "has no captured launch of kernel 'graph_twice'")) << other;
  // The refused rebinds changed nothing.
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(7.0f));
}

#ifdef TESSERA_GRAPH_TEST_GPU
// A rebind updates the instantiated CUDA graph in place (cuGraphExecUpdate, no new
// instantiation): later replays compute with the new tensor and scalar, and a kernel's error
// report is still wired to the updated graph.
TEST(GpuGraphRebind, ARebindUpdatesTheInstantiatedGraphInPlaceAndKeepsItsErrorReports) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> a = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> b = full<float>({kN}, 10.0f, dev());
  Tensor<float, 1> y, f;
  Graph g = capture("update", [&] {
    auto [yp, a1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), a).sync();
    y = std::move(yp).unpartition();
    auto [fp, v] = graph_set_to(zeros<float>({kN}, dev()).partition({64}), 5.0f).sync();
    f = std::move(fp).unpartition();
  });
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(8.0f));
  const runtime::GpuGraphCounts before = runtime::gpu_graph_counts();
  g.rebind(a, b);
  g.rebind(graph_set_to, "v", 6.0f);
  const runtime::GpuGraphCounts after = runtime::gpu_graph_counts();
  EXPECT_EQ(after.instantiations, before.instantiations);
  EXPECT_EQ(after.updates_in_place, before.updates_in_place + 2);
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(20.0f));
  EXPECT_EQ(f.to_vector(), all(6.0f));

  // A kernel with an error report: its last block reads past x, unpadded.
  Tensor<float, 1> x = full<float>({kN}, 1.0f, dev());
  Tensor<float, 1> x2 = full<float>({kN}, 2.0f, dev());
  Tensor<float, 1> z;
  Graph bad = capture("bad", [&] {
    auto [zp, x1] = graph_next_tile(zeros<float>({kN}, dev()).partition({64}), x).sync();
    z = std::move(zp).unpartition();
  });
  EXPECT_TRUE(contains(error_of<BoundsError>([&] { bad.replay().sync(); }), "unpadded load"));
  const uint64_t updates = runtime::gpu_graph_counts().updates_in_place;
  bad.rebind(x, x2);
  EXPECT_EQ(runtime::gpu_graph_counts().updates_in_place, updates + 1);
  const std::string again = error_of<BoundsError>([&] { bad.replay().sync(); });
  EXPECT_TRUE(contains(again, "unpadded load from 'x'")) << again;
}
#endif

#ifdef TESSERA_GRAPH_TEST_GPU
// The CUDA graph holds the captured kernels and, per kernel with an error report, one copy of
// that report (two where the module does not lay it out in one piece) and its clearing -- not a
// copy after every launch -- and edges only between launches that share a storage.
TEST(GpuGraphNodes, AGraphHoldsItsKernelsAndOneReportCopyPerReportingKernel) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> x = full<float>({kN}, 3.0f, dev());
  Tensor<float, 1> y, v;
  Graph g = capture("nodes", [&] {
    // Two chains that share only x, which neither writes: y = same(same(x)), v = x + 2.
    auto [y1, x1] = graph_same_tile(zeros<float>({kN}, dev()).partition({64}), x).sync();
    auto [y2, y1in] =
        graph_same_tile(zeros<float>({kN}, dev()).partition({64}), std::move(y1).unpartition())
            .sync();
    y = std::move(y2).unpartition();
    auto [u, x2] = graph_plus_one(zeros<float>({kN}, dev()).partition({64}), x).sync();
    auto [v1, u1] =
        graph_plus_one(zeros<float>({kN}, dev()).partition({64}), std::move(u).unpartition())
            .sync();
    v = std::move(v1).unpartition();
  });
  const runtime::GpuGraphNodes nodes = runtime::gpu_graph_last_nodes();
  EXPECT_EQ(nodes.kernels, 4);
  EXPECT_TRUE(nodes.copies == 1 || nodes.copies == 2) << nodes.copies;
  EXPECT_EQ(nodes.memsets, 1);
  EXPECT_EQ(nodes.others, 0);
  // One edge in each chain, one from each chain's end to the report's copy, and the report's
  // copies and clearing in a row (-1: the driver cannot edit or count edges).
  if (nodes.edges >= 0) {
    EXPECT_EQ(nodes.edges, 2 + 2 + nodes.copies);
    // The two chains start at once (a graph left one chain has one root, and as many edges).
    EXPECT_EQ(nodes.roots, 2);
  }
  for (int i = 0; i < 3; ++i) g.replay();
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(3.0f));
  EXPECT_EQ(v.to_vector(), all(5.0f));
}
#endif

GRAPH_TEST(GraphReplayError, TheFailingLaunchAmongLaunchesOfReportingKernelsIsTheOneReported) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> x = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> y, z;
  Graph bad = capture([&] {
    auto [a, x1] = graph_same_tile(zeros<float>({kN}, dev()).partition({64}), x).sync();
    auto [b, a1] =
        graph_same_tile(zeros<float>({kN}, dev()).partition({64}), std::move(a).unpartition())
            .sync();
    y = std::move(b).unpartition();
    auto [c, x2] = graph_next_tile(zeros<float>({kN}, dev()).partition({64}), x).sync();
    z = std::move(c).unpartition();
  });
  // Each replay reports the error (on a GPU its own, the report cleared after each; on the CPU
  // the second quotes the first's, which it followed and so did not run).
  for (int i = 0; i < 2; ++i) {
#ifdef TESSERA_GRAPH_TEST_GPU
    const std::string message = error_of<BoundsError>([&] { bad.replay().sync(); });
#else
    const std::string message = i == 0 ? error_of<BoundsError>([&] { bad.replay().sync(); })
                                       : error_of<Error>([&] { bad.replay().sync(); });
#endif
#ifdef TESSERA_GRAPH_TEST_GPU
    EXPECT_TRUE(contains(message, "kernel 'graph_next_tile'")) << message;
#endif
    EXPECT_TRUE(contains(message, "unpadded load from 'x'")) << message;
    EXPECT_TRUE(contains(message, "graph_test.cpp:" + std::to_string(kNextTileLoadLine)))
        << message;
  }
  // The kernels' reports are clear for their launches outside the graph.
  Tensor<float, 1> x3 = full<float>({kN}, 6.0f, dev());
  auto [d, x4] = graph_same_tile(zeros<float>({kN}, dev()).partition({64}), x3).sync();
  EXPECT_EQ(std::move(d).unpartition().to_vector(), all(6.0f));
  auto [e, x5] = graph_plus_one(zeros<float>({kN}, dev()).partition({64}), x3).sync();
  EXPECT_EQ(std::move(e).unpartition().to_vector(), all(7.0f));
}

// ---- attempts to break the graph's ownership, each with a twin that works -------------------

GRAPH_TEST(GraphAttack, PartitioningAnInputTheGraphReadsWhileAReplayIsPendingIsRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> x = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> y;
  Graph g = capture("scale", [&] {
    auto [yp, x1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), x).sync();
    y = std::move(yp).unpartition();
  });
  std::optional<GraphRun> run;
  std::string message;
  {
    Hold hold;
    run.emplace(g.replay());
    const int line = __LINE__ + 1;
    message = error_of<GraphError>([&] { (void)std::move(x).partition({64}); });
    EXPECT_TRUE(contains(file_and_line(message), "graph_test.cpp:" + std::to_string(line)))
        << message;
  }
  EXPECT_TRUE(contains(message, "partition() of a tensor that graph 'scale' (captured at "))
      << message;
  EXPECT_TRUE(contains(message, "(argument 2 ('x', In) of kernel 'graph_twice' (defined at "))
      << message;
  EXPECT_TRUE(contains(message,
                       ", a f32 tensor of shape [65536]): the graph reads it on every replay, so "
                       "it cannot be written outside the graph while the graph lives; partition "
                       "a copy (t.to(t.device())), or destroy the graph first"))
      << message;
  std::move(*run).sync();
  EXPECT_EQ(y.to_vector(), all(8.0f));  // the refused partition changed nothing
  // The twin: once the graph is gone, x is the caller's again.
  g = Graph();
  auto [xp, v] = graph_set_to(std::move(x).partition({64}), 1.0f).sync();
  EXPECT_EQ(std::move(xp).unpartition().to_vector(), all(1.0f));
}

GRAPH_TEST(GraphAttack, RepartitioningACapturedOutputOutsideTheGraphIsRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y = zeros<float>({kN}, dev());
  Graph g = counter(y, "count");
  g.replay();
  const std::string message = error_of<GraphError>([&] { (void)std::move(y).partition({32}); });
  EXPECT_TRUE(contains(message, "partition() of a tensor that graph 'count' (captured at "))
      << message;
  EXPECT_TRUE(contains(message, "the graph writes it on every replay")) << message;
  // The twin (counter() itself): inside the capture, re-partitioning the tensor that the graph
  // already holds is how its second launch writes it; and the caller's handle still reads.
  EXPECT_EQ(y.to_vector(), all(1.0f));
}

GRAPH_TEST(GraphAttack, WritingThroughAPartitionKeptFromTheCaptureIsRefused) {
  SKIP_WITHOUT_DEVICE();
  std::optional<Partition<float, 1>> kept;
  Graph g = capture("fill", [&] {
    auto [yp, v] = graph_set_to(zeros<float>({kN}, dev()).partition({64}), 5.0f).sync();
    kept.emplace(std::move(yp));
  });
  const std::string message =
      error_of<GraphError>([&] { (void)graph_set_to(std::move(*kept), 7.0f); });
  EXPECT_TRUE(contains(after_location(message),
                       "kernel 'graph_set_to': argument 1 (Out) writes a tensor that graph "
                       "'fill' (captured at "))
      << message;
  EXPECT_TRUE(contains(message,
                       "the graph writes it on every replay, so nothing outside the graph may "
                       "write it while the graph lives; capture this launch into the graph, or "
                       "destroy the graph first"))
      << message;
  // The refused launch left the partition with the caller; the twin: the graph writes it.
  g.replay().sync();
  EXPECT_EQ(std::move(*kept).unpartition().to_vector(), all(5.0f));
}

GRAPH_TEST(GraphAttack, AHostReadInsideCaptureOfWhatTheCaptureWritesIsRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> x = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> y;
  std::string message;
  Graph g = capture("scale", [&] {
    auto [yp, x1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), x).sync();
    y = std::move(yp).unpartition();
    message = error_of<GraphError>([&] { (void)y.to_vector(); });
    EXPECT_EQ(x.to_vector(), all(4.0f));  // what the capture only reads is the caller's
  });
  EXPECT_TRUE(contains(message, "inside the capture of graph 'scale' (captured at ")) << message;
  EXPECT_TRUE(contains(message,
                       "the host uses a tensor that a captured launch writes (argument 1 ('z', "
                       "Out) of kernel 'graph_twice'"))
      << message;
  EXPECT_TRUE(contains(message,
                       "captured launches run only at replay(), so it holds nothing "
                       "they computed; use it after g.replay().sync()"))
      << message;
  // The twin: after a replay, the read sees what the graph computed.
  g.replay().sync();
  EXPECT_EQ(y.to_vector(), all(8.0f));
}

GRAPH_TEST(GraphAttack, UncheckedDataOfACapturedOutputIsRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y;
  Graph g = capture("fill", [&] {
    auto [yp, v] = graph_set_to(zeros<float>({kN}, dev()).partition({64}), 5.0f).sync();
    y = std::move(yp).unpartition();
  });
  const std::string message = error_of<GraphError>([&] { (void)y.unchecked_data(); });
  EXPECT_TRUE(contains(message, "unchecked_data() of a tensor that graph 'fill' (captured at "))
      << message;
  EXPECT_TRUE(contains(message, "a raw pointer to it would race with the replays")) << message;
  // The twin: once the graph is gone, the address may be had.
  g = Graph();
  EXPECT_NE(y.unchecked_data(), nullptr);
}

GRAPH_TEST(GraphAttack, NestedCapturesAndReplaysInsideACaptureAreRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y = zeros<float>({kN}, dev());
  Graph inner = counter(y, "inner");
  std::string nested, replayed;
  Graph outer = capture("outer", [&] {
    nested = error_of<GraphError>([&] { (void)capture([] {}); });
    replayed = error_of<GraphError>([&] { (void)inner.replay(); });
  });
  EXPECT_TRUE(contains(nested, "capture() inside the capture of graph 'outer' (captured at "))
      << nested;
  EXPECT_TRUE(contains(nested, "graphs do not nest")) << nested;
  EXPECT_TRUE(contains(replayed, "replay() of graph 'inner' (captured at ")) << replayed;
  EXPECT_TRUE(contains(replayed, "a replay cannot be recorded into a graph")) << replayed;
  EXPECT_EQ(outer.launches(), 0u);
  outer.replay().sync();  // an empty graph replays nothing
  // The twin: outside the capture, the replay runs.
  inner.replay().sync();
  EXPECT_EQ(y.to_vector(), all(1.0f));
}

GRAPH_TEST(GraphAttack, ReplayOfAnEmptyGraphIsRefused) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> y = zeros<float>({kN}, dev());
  Graph g = counter(y);
  Graph moved = std::move(g);
  EXPECT_TRUE(contains(error_of<UsageError>([&] { (void)g.replay(); }),  // NOLINT: moved from
                       "replay() of an empty Graph (made by default, or moved from); replay the "
                       "graph that capture() returned"));
  moved.replay().sync();  // the twin
  EXPECT_EQ(y.to_vector(), all(1.0f));
}

GRAPH_TEST(GraphAttack, ACaptureThatThrowsHoldsNothingAfterwards) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> x = full<float>({kN}, 4.0f, dev());
  EXPECT_THROW((void)capture([&] {
                 auto [yp, x1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), x).sync();
                 throw UsageError("the scope failed");
               }),
               UsageError);
  // x was captured by the abandoned graph, which is gone: x is the caller's alone again.
  auto [xp, v] = graph_set_to(std::move(x).partition({64}), 1.0f).sync();
  EXPECT_EQ(std::move(xp).unpartition().to_vector(), all(1.0f));
}

GRAPH_TEST(GraphReplayError, AKernelErrorInAReplaySurfacesAtItsSyncAtTheUsersLine) {
  SKIP_WITHOUT_DEVICE();
  Tensor<float, 1> x = full<float>({kN}, 4.0f, dev());
  Tensor<float, 1> y;
  Graph bad = capture([&] {
    auto [yp, x1] = graph_next_tile(zeros<float>({kN}, dev()).partition({64}), x).sync();
    y = std::move(yp).unpartition();
  });
  const std::string message = error_of<BoundsError>([&] { bad.replay().sync(); });
  EXPECT_TRUE(contains(message, "unpadded load from 'x'")) << message;
  EXPECT_TRUE(contains(message, "graph_test.cpp:")) << message;  // the load's line
  // A failed replay whose GraphRun was dropped is not silent: it is its output's pending writer,
  // so a read of the output throws its error (on the CPU a LaunchError quoting the failed replay
  // it followed, which it did not run after; on a GPU, where it ran, its own BoundsError).
  bad.replay();
  const std::string read = error_of<Error>([&] { (void)y.to_vector(); });
  EXPECT_TRUE(contains(read, "unpadded load from 'x'")) << read;
  // The twin: the same shape of graph, reading inside x, runs.
  Graph good = capture([&] {
    auto [yp, x1] = graph_twice(zeros<float>({kN}, dev()).partition({64}), x).sync();
    y = std::move(yp).unpartition();
  });
  good.replay().sync();
  EXPECT_EQ(y.to_vector(), all(8.0f));
}

}  // namespace
}  // namespace tessera::test

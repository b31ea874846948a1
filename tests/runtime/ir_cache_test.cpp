// A specialization compiled by one process is read back by the next from the JIT cache folder,
// without tracing the kernel body (src/runtime/ir_cache.hpp: on GPUs by default, here on the CPU
// through TESSERA_IR_CACHE=on, with the same code path); the IR survives the round trip
// through bytes exactly, and damaged bytes are refused, never trusted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "tessera/analysis/promote_locals.hpp"
#include "tessera/ir/printer.hpp"
#include "tessera/ir/serialize.hpp"
#include "tessera/runtime/jit_cache.hpp"
#include "tile/trace_kernel.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

// The CPU backend, and a cache folder of this process's own, shared with the child processes
// its tests start (they inherit TESSERA_CACHE_DIR).
struct CacheFolder {
  std::string made;
  CacheFolder() {
    setenv("TESSERA_DEVICE", "cpu", 1);
    setenv("TESSERA_IR_CACHE", "on", 0);  // off by default
    if (std::getenv("TESSERA_IR_TEST_CHILD")) return;
    char dir[] = "/tmp/tessera-ir-cache-test-XXXXXX";
    if (!mkdtemp(dir)) return;
    made = dir;
    setenv("TESSERA_CACHE_DIR", dir, 1);
  }
  ~CacheFolder() {
    std::error_code ignored;
    if (!made.empty()) std::filesystem::remove_all(made, ignored);
  }
} g_cache_folder;

int g_traces = 0;  // how many times the body ran, i.e. was traced

TESSERA_KERNEL(counted_scale, Out<float> z, In<float> x, Scalar<float> a) {
  ++g_traces;
  const Tile<float> v = load_like(x, z);
  Tile<float> acc = v;
  for_range(0, 3, [&](Index) { acc = acc + v * a; });
  z.store(acc);
};

// Launches counted_scale on 1000 elements and checks z = x * (1 + 3a).
void launch_and_check() {
  std::vector<float> xs(1000);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) * 0.5f;
  auto [z, x, a] =
      counted_scale(zeros<float>({1000}).partition({128}), from_host(xs, {1000}), 2.0f).sync();
  const std::vector<float> got = std::move(z).unpartition().to_vector();
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(got[i], xs[i] * 7.0f) << i;
}

// Runs the child test `name` (a DISABLED_ one below) in a new process of this program, with
// `env` before it; its exit status.
int child(const std::string& name, const std::string& env = "") {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const std::string command = "TESSERA_IR_TEST_CHILD=1 " + env + " '" + self +
                              "' --gtest_also_run_disabled_tests --gtest_filter=IrCacheChild." +
                              name + " >/dev/null 2>&1";
  return std::system(command.c_str());
}

TEST(IrCacheChild, DISABLED_ReadsTheStoredIrWithoutTracing) {
  launch_and_check();
  EXPECT_EQ(g_traces, 0);
}
TEST(IrCacheChild, DISABLED_TracesTwice) {
  launch_and_check();
  EXPECT_EQ(g_traces, 2);
}

TEST(IrCache, ASecondProcessLaunchesWithoutTracing) {
  launch_and_check();
  ASSERT_EQ(g_traces, 2);  // a new specialization is traced twice (the trace check)
  EXPECT_EQ(child("DISABLED_ReadsTheStoredIrWithoutTracing"), 0);
  // The twin that expects a trace fails: the children do run, and count.
  EXPECT_NE(child("DISABLED_TracesTwice"), 0);
}

TEST(IrCache, TraceChecksStillTrace) {
  launch_and_check();
  // TESSERA_CHECK=trace compares each launch with the trace it was compiled from: that needs the
  // trace, so nothing is read back.
  EXPECT_EQ(child("DISABLED_TracesTwice", "TESSERA_CHECK=trace"), 0);
  EXPECT_EQ(child("DISABLED_TracesTwice", "TESSERA_DUMP=ir"), 0);
  EXPECT_EQ(child("DISABLED_TracesTwice", "TESSERA_IR_CACHE=off"), 0);
}

// Off unless asked for: the key cannot see host state a body reads while traced, so a later run
// must not get a stored run's IR silently (docs/safety_tracing.md).
TEST(IrCache, WithoutTheSwitchEveryRunTraces) {
  launch_and_check();
  EXPECT_EQ(child("DISABLED_TracesTwice", "TESSERA_IR_CACHE="), 0);
  EXPECT_NE(child("DISABLED_ReadsTheStoredIrWithoutTracing", "TESSERA_IR_CACHE="), 0);
}

TEST(IrCache, ADamagedEntryIsTracedAgain) {
  launch_and_check();
  // Damage every stored IR entry's last bytes: the checksum no longer matches.
  int damaged = 0;
  for (const auto& e : runtime::JitCache::global().disk_entries()) {
    if (e.description.find("counted_scale") == std::string::npos) continue;
    std::fstream f(e.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-2, std::ios::end);
    f.write("??", 2);
    ++damaged;
  }
  ASSERT_EQ(damaged, 1);
  EXPECT_EQ(child("DISABLED_TracesTwice"), 0);
  // The child stored a good entry again.
  EXPECT_EQ(child("DISABLED_ReadsTheStoredIrWithoutTracing"), 0);
}

// A kernel with every kind of structure: loops with carried values, an if, reductions, casts,
// constants with exact integers, a print.
ir::Function rich_kernel() {
  ir::Function f = trace_kernel<Out<float, 2>, In<half, 2>, In<half, 2>, Scalar<int32_t>>(
      "rich",
      {out_param("c", DType::F32, {32, 16}), in_param("a", DType::F16, 2),
       in_param("b", DType::F16, 2), scalar_param("n", DType::I32)},
      [](Out<float, 2> c, In<half, 2> a, In<half, 2> b, Scalar<int32_t> n) {
        const Index i = tile_index(0), j = tile_index(1);
        Tile<float> acc = Tile<float>::zeros({32, 16});
        for_range(0, n, [&](Index k) {
          acc = mma(load(a, {i, k}, {32, 16}), load(b, {k, j}, {16, 16}), acc);
        });
        const Tile<float> m = max(acc, 1);
        c.store(acc - broadcast(m.reshape({32, 1}), {32, 16}) +
                Tile<float>::full({32, 16}, static_cast<float>(int64_t{1} << 40)));
      });
  analysis::promote_locals(f);
  return f;
}

TEST(IrSerialize, ARoundTripGivesTheSameIr) {
  const ir::Function f = rich_kernel();
  const std::string bytes = ir::serialize(f);
  const std::optional<ir::Function> back = ir::deserialize(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(ir::print(*back), ir::print(f));
  EXPECT_EQ(ir::serialize(*back), bytes);  // every field, locations included
  EXPECT_EQ(back->body.ops.front().loc.str(), f.body.ops.front().loc.str());
}

// Every attribute of every op comes back, compared field by field (Attrs' ==), for ops whose
// attributes the printer shows only in part or not at all: slice bounds, a descending sort,
// argsort, concat, gather, load_at, scans.
TEST(IrSerialize, EveryAttributeSurvivesTheRoundTrip) {
  ir::Function f = trace_kernel<Out<float, 2>, In<float, 2>, In<int32_t, 1>>(
      "attrs",
      {out_param("z", DType::F32, {4, 16}), in_param("x", DType::F32, 2),
       in_param("ids", DType::I32, 1)},
      [](Out<float, 2> z, In<float, 2> x, In<int32_t, 1> ids) {
        const Tile<float> g = gather(x, load(ids, {tile_index(0)}, {4}), {3}, {4, 32});
        const Tile<float> s = sort(g, 1, Order::descending).slice(1, 5, 16);
        const Tile<float> i = argsort(g.slice(1, 0, 8), 1).cast<float>();
        const Tile<float> a = load_at(x, {1, 2}, {4, 8}, Pad::none());
        z.store(s + concat({i, cumsum(a, 1, Scan::exclusive)}, 1));
      });
  analysis::promote_locals(f);
  const std::optional<ir::Function> back = ir::deserialize(ir::serialize(f));
  ASSERT_TRUE(back.has_value());
  std::vector<ir::Attrs> want, got;
  ir::walk(f.body, [&](const ir::Op& op) { want.push_back(op.attrs); });
  ir::walk(back->body, [&](const ir::Op& op) { got.push_back(op.attrs); });
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(got[k] == want[k]) << "op " << k;
}

TEST(IrSerialize, DamagedBytesAreRefused) {
  const std::string bytes = ir::serialize(rich_kernel());
  // Every truncation is refused.
  for (size_t n = 0; n < bytes.size(); n += 7)
    EXPECT_FALSE(ir::deserialize(std::string_view(bytes).substr(0, n)).has_value()) << n;
  // A flipped byte anywhere is refused or still reads as IR the verifier accepts; it never
  // crashes (the runtime's entries are checksummed first: this is the second line of defence).
  for (size_t at = 0; at < bytes.size(); at += 3) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    (void)ir::deserialize(bad);
  }
}

// A larger body for the timing below: a GEMM loop and a softmax-like epilogue with a GELU.
TESSERA_KERNEL(big_kernel, Out<float, 2> c, In<float, 2> a, In<float, 2> b) {
  const Index i = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({16, 16});
  const Index k_tiles = ((a.dim(1) + 15) / 16).cast<int32_t>();
  for_range(0, k_tiles, [&](Index k) {
    acc = mma(load(a, {i, k}, {16, 16}), load(b, {k, j}, {16, 16}), acc);
  });
  const Tile<float> g = acc * 0.5f * (tanh((acc + acc * acc * acc * 0.044715f) * 0.79788f) + 1.0f);
  const Tile<float> e = exp(g - broadcast(max(g, 1).reshape({16, 1}), {16, 16}));
  const Tile<float> s = e / broadcast(sum(e, 1).reshape({16, 1}), {16, 16});
  c.store(s * sigmoid(s) + sqrt(abs(s) + 1.0f) - log1p(abs(s)) + minimum(s, 0.25f));
};

// Not a test: the host time of the first launch of a kernel in a new process, which is a cold
// trace and compile, or a read of the stored IR. Run it twice with one cache folder:
//   TESSERA_IR_TEST_CHILD=1 TESSERA_CACHE_DIR=/tmp/c build/tests/runtime/ir_cache_tests
//     --gtest_also_run_disabled_tests --gtest_filter=IrCacheTiming.*
// (the first run stores, the second reads; TESSERA_IR_CACHE=off for a trace every time).
TEST(IrCacheTiming, DISABLED_FirstLaunchInThisProcess) {
  std::vector<float> xs(1000, 1.0f);
  const auto x = from_host(xs, {1000});
  auto out = zeros<float>({1000}).partition({128});
  const auto t0 = std::chrono::steady_clock::now();
  auto pending = counted_scale(std::move(out), x, 2.0f);  // the launch call: trace or read back
  const double call =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  auto [z, x1, a] = std::move(pending).sync();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const auto t1 = std::chrono::steady_clock::now();
  auto [z2, x2, a2] = counted_scale(std::move(z), x, 2.0f).sync();
  const double warm =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  const auto m = from_host(std::vector<float>(64 * 64, 0.5f), {64, 64});
  auto big_out = zeros<float>({64, 64}).partition({16, 16});
  const auto t2 = std::chrono::steady_clock::now();
  auto big = big_kernel(std::move(big_out), m, m);
  const double big_call =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t2).count();
  (void)std::move(big).sync();
  std::printf("larger kernel: the first launch call %.3f ms\n", big_call);
  std::printf("first launch %.3f ms (the call %.3f ms; traces: %d), second launch %.3f ms\n", ms,
              call, g_traces, warm);
}

}  // namespace
}  // namespace tessera::test

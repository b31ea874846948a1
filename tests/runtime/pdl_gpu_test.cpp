// Programmatic dependent launch on a GPU: on sm_90+ a tile kernel may start while the kernel before
// it on the stream finishes, and its griddepcontrol.wait (before its first global access) is what
// orders it after that kernel. Chains of read-after-write and write-after-read on one stream,
// eager and as a replayed graph, and with a SIMT kernel (launched plainly) between tile kernels,
// checked element for element against the CPU backend or a host reference. The values are small
// integers, exact in f32, so any difference is an ordering error, not rounding. Registered twice
// (CMakeLists.txt): as is (programmatic launches on), and under TESSERA_PDL=0.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/runtime/graph.hpp>
#include <tessera/simt/simt.hpp>
#include <tessera/tessera.hpp>

#include "runtime/gpu_graph.hpp"  // src/runtime: the last graph's edges

namespace tessera::test {
namespace {

using namespace tessera::tile;

constexpr int64_t kTile = 256;

// y = x + v
TESSERA_KERNEL(pdl_offset, Out<float> y, In<float> x, Scalar<float> v) {
  y.store(load_like(x, y) + v);
};
// z = y + the next tile of y (zeros past the end): a block reads what another block of the kernel
// before wrote, so a reader that started early and did not wait would see the old values.
TESSERA_KERNEL(pdl_neighbour_sum, Out<float> z, In<float> y) {
  z.store(load_like(y, z) + load(y, {z.tile_index(0) + 1}, {kTile}, Pad::zero()));
};
// y = 2 z - x: overwrites y, which the kernel two launches before reads (write after read).
TESSERA_KERNEL(pdl_twice_minus, Out<float> y, In<float> z, In<float> x) {
  y.store(load_like(z, y) * 2.0f - load_like(x, y));
};
// acc = prev + y + z
TESSERA_KERNEL(pdl_accumulate, Out<float> acc, In<float> prev, In<float> y, In<float> z) {
  acc.store(load_like(prev, acc) + load_like(y, acc) + load_like(z, acc));
};

struct State {
  Tensor<float, 1> x, y, z, acc, spare;
};

State start(const std::vector<float>& xs, Device d) {
  const int64_t n = static_cast<int64_t>(xs.size());
  return {from_host(xs, d), zeros<float>({n}, d), zeros<float>({n}, d), zeros<float>({n}, d),
          zeros<float>({n}, d)};
}

// One step: four launches chained on the device's stream with no host wait. Every one but the
// first reads what the one before it wrote, and pdl_twice_minus overwrites what pdl_neighbour_sum
// reads.
void step(State& s, float v) {
  {
    auto [y, x, v1] = pdl_offset(std::move(s.y).partition({kTile}), s.x, v).chain();
    s.y = std::move(y).unpartition();
  }
  {
    auto [z, y] = pdl_neighbour_sum(std::move(s.z).partition({kTile}), s.y).chain();
    s.z = std::move(z).unpartition();
  }
  {
    auto [y, z, x] = pdl_twice_minus(std::move(s.y).partition({kTile}), s.z, s.x).chain();
    s.y = std::move(y).unpartition();
  }
  {
    auto [acc, prev, y, z] =
        pdl_accumulate(std::move(s.spare).partition({kTile}), s.acc, s.y, s.z).chain();
    prev = Tensor<float, 1>();
    s.spare = std::move(s.acc);
    s.acc = std::move(acc).unpartition();
  }
}

std::vector<float> inputs(int64_t n) {
  std::vector<float> xs(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) xs[static_cast<size_t>(i)] = static_cast<float>((i * 37) % 101);
  return xs;
}

// The first element where a and b differ, for the message.
std::string first_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return "sizes differ";
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " +
             std::to_string(b[i]);
  return "";
}

#define SKIP_WITHOUT_GPU()                               \
  do {                                                   \
    std::string why;                                     \
    if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why; \
  } while (0)

// Sizes: one wave of blocks (where the next grid's blocks can start beside the last ones of the
// one before), and many waves with a ragged last tile.
const int64_t kSizes[] = {64 * kTile, (int64_t{1} << 20) + 100};

TEST(GpuProgrammaticLaunch, ChainedReadAfterWriteAndWriteAfterReadMatchTheCpuBackend) {
  SKIP_WITHOUT_GPU();
  for (const int64_t n : kSizes) {
    const std::vector<float> xs = inputs(n);
    State gpu = start(xs, Device::cuda(0)), cpu = start(xs, Device::cpu());
    const int steps = n <= 64 * kTile ? 400 : 24;
    for (int i = 0; i < steps; ++i) {
      step(gpu, static_cast<float>(i % 5));
      step(cpu, static_cast<float>(i % 5));
    }
    EXPECT_EQ(first_difference(gpu.acc.to_vector(), cpu.acc.to_vector()), "") << "n = " << n;
    EXPECT_EQ(first_difference(gpu.y.to_vector(), cpu.y.to_vector()), "") << "n = " << n;
  }
}

TEST(GpuProgrammaticLaunch, TheSameChainCapturedAsAGraphAndReplayedMatchesTheCpuBackend) {
  SKIP_WITHOUT_GPU();
  for (const int64_t n : kSizes) {
    const std::vector<float> xs = inputs(n);
    auto run = [&](Device d) {
      State s = start(xs, d);
      // Two steps, so that acc and spare are back in their places at the end of a replay.
      Graph g = capture("pdl_steps", [&] {
        step(s, 1.0f);
        step(s, 3.0f);
      });
      if (d.is_cuda()) {
        // The launches reached the driver with the attribute: stream capture made programmatic
        // edges between them (none under TESSERA_PDL=0 or for code without the wait).
        const runtime::GpuGraphNodes nodes = runtime::gpu_graph_last_nodes();
        const char* pdl = std::getenv("TESSERA_PDL");
        const bool on = runtime::gpu_arch(d).major >= 9 && !(pdl && std::string(pdl) == "0");
        if (on)
          EXPECT_GT(nodes.programmatic_edges, 0) << "edges " << nodes.edges;
        else
          EXPECT_EQ(nodes.programmatic_edges, 0);
      }
      for (int r = 0; r < (n <= 64 * kTile ? 200 : 10); ++r) g.replay();
      return std::make_pair(s.acc.to_vector(), s.y.to_vector());
    };
    const auto gpu = run(Device::cuda(0));
    const auto cpu = run(Device::cpu());
    EXPECT_EQ(first_difference(gpu.first, cpu.first), "") << "n = " << n;
    EXPECT_EQ(first_difference(gpu.second, cpu.second), "") << "n = " << n;
  }
}

// A SIMT kernel between two tile kernels: launched without the attribute, so it starts only once
// the tile kernel before it has finished; the tile kernel after it waits for it at its
// griddepcontrol.wait.
TESSERA_SIMT_KERNEL(pdl_simt_axpy, simt::Index1D i, simt::DisjointSpan<float> out, float a,
                    simt::Span<const float> x, simt::Span<const float> y) {
  using namespace tessera::simt;
  return contract<1>().block_exactly(256).require(size<"x"> == size<"out">,
                                                  size<"y"> == size<"out">);
};
constexpr const char* kAxpySource = R"(
using namespace tessera::simt;
TESSERA_SIMT_DEFINE(pdl_simt_axpy, Index1D i, DisjointSpan<float> out, float a,
                    Span<const float> x, Span<const float> y) {
  if (auto o = out.at(i)) *o = a * x[i] + y[i];
}
)";

TEST(GpuProgrammaticLaunch, ASimtKernelBetweenTwoTileKernelsIsOrderedBothWays) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::cuda(0);
  const simt::Module module = simt::Module::nvrtc<pdl_simt_axpy>(kAxpySource, "pdl_axpy.cu", gpu);
  for (const int64_t n : kSizes) {
    const auto axpy = simt::prepare<pdl_simt_axpy>(module, simt::cover(n, 256));
    const std::vector<float> xs = inputs(n);
    Tensor<float, 1> x = from_host(xs, gpu), y = zeros<float>({n}, gpu), w = zeros<float>({n}, gpu),
                     z = zeros<float>({n}, gpu), acc = zeros<float>({n}, gpu),
                     spare = zeros<float>({n}, gpu);
    std::vector<double> hx(xs.begin(), xs.end()), hy(xs.size()), hw(xs.size()), hz(xs.size()),
        hacc(xs.size());
    const int steps = 50;
    for (int i = 0; i < steps; ++i) {
      const float v = static_cast<float>(i % 3);
      {  // tile: y = x + v
        auto [y1, x1, v1] = pdl_offset(std::move(y).partition({kTile}), x, v).chain();
        y = std::move(y1).unpartition();
      }
      {  // SIMT: w = 3 y + x (reads what the tile kernel wrote)
        auto [w1, a, y1, x1] = axpy(std::move(w), 3.0f, y, x).chain();
        w = std::move(w1);
      }
      {  // tile: z = w + next tile of w (reads what the SIMT kernel wrote)
        auto [z1, w1] = pdl_neighbour_sum(std::move(z).partition({kTile}), w).chain();
        z = std::move(z1).unpartition();
      }
      {  // tile: y = 2 z - x (overwrites y, which the SIMT kernel read)
        auto [y1, z1, x1] = pdl_twice_minus(std::move(y).partition({kTile}), z, x).chain();
        y = std::move(y1).unpartition();
      }
      {  // tile: acc += y + z (every step's values count, not only the last one's)
        auto [a1, prev, y1, z1] =
            pdl_accumulate(std::move(spare).partition({kTile}), acc, y, z).chain();
        prev = Tensor<float, 1>();
        spare = std::move(acc);
        acc = std::move(a1).unpartition();
      }
      const size_t count = xs.size(), tile = static_cast<size_t>(kTile);
      for (size_t e = 0; e < count; ++e) hy[e] = hx[e] + v;
      for (size_t e = 0; e < count; ++e) hw[e] = 3.0 * hy[e] + hx[e];
      for (size_t e = 0; e < count; ++e) hz[e] = hw[e] + (e + tile < count ? hw[e + tile] : 0.0);
      for (size_t e = 0; e < count; ++e) hy[e] = 2.0 * hz[e] - hx[e];
      for (size_t e = 0; e < count; ++e) hacc[e] += hy[e] + hz[e];
    }
    EXPECT_EQ(first_difference(y.to_vector(), std::vector<float>(hy.begin(), hy.end())), "")
        << "n = " << n;
    EXPECT_EQ(first_difference(acc.to_vector(), std::vector<float>(hacc.begin(), hacc.end())), "")
        << "n = " << n;
  }
}

}  // namespace
}  // namespace tessera::test

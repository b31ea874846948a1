// A step of three kernels captured once into a graph and replayed ten times: each replay runs the
// three launches again, in order, with the arguments they were captured with (on a GPU, one CUDA
// graph launch instead of three kernel launches). The step writes its result back into the tensor
// it reads, so each replay iterates
//
//   x <- relu(0.5 x + b)
//
// Inside capture() a launch is recorded, not run: its Future hands the arguments back at once, so
// the scope reads like eager code. The graph holds every tensor it captured until it is
// destroyed; docs/async.md says what that forbids, and why.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/runtime/graph.hpp>
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(scale, Out<float> z, In<float> x, Scalar<float> a) {
  z.store(a * load_like(x, z));
};
TESSERA_KERNEL(add, Out<float> z, In<float> x, In<float> y) {
  z.store(load_like(x, z) + load_like(y, z));
};
TESSERA_KERNEL(relu, Out<float> z, In<float> x) {
  z.store(maximum(load_like(x, z), 0.0f));
};

int main() {
  const int64_t n = 100000;  // a ragged last tile
  const int replays = 10;
  std::vector<float> xs(n), bs(n);
  for (int64_t i = 0; i < n; ++i) xs[i] = std::sin(0.01f * i), bs[i] = 0.5f - 0.00001f * i;
  Tensor<float, 1> x = from_host(xs);
  const auto b = from_host(bs);
  auto tiles = [&] { return zeros<float>({n}).partition({1024}); };

  Graph step = capture("step", [&] {
    auto [h, x1, a] = scale(tiles(), x, 0.5f).sync();  // recorded: returns at once
    x = Tensor<float, 1>();  // x1 is now x's only handle besides the graph's own
    auto [g, h1, b1] = add(tiles(), std::move(h).unpartition(), b).sync();
    // The result goes back into x's storage: a launch captured later may write what an earlier
    // one read, and each replay runs them in this order.
    auto [r, g1] = relu(std::move(x1).partition({1024}), std::move(g).unpartition()).sync();
    x = std::move(r).unpartition();
  });
  for (int k = 0; k < replays; ++k) step.replay();  // queued back to back, no host wait
  const std::vector<float> out = x.to_vector();     // waits for the last replay

  std::vector<double> want(xs.begin(), xs.end());
  for (int k = 0; k < replays; ++k)
    for (int64_t i = 0; i < n; ++i) want[i] = std::max(0.5 * want[i] + bs[i], 0.0);
  for (int64_t i = 0; i < n; ++i)
    if (std::fabs(out[i] - want[i]) > 1e-5 * (std::fabs(want[i]) + 1.0)) {
      std::printf("graph_replay: element %lld is %.9g, the reference is %.9g\n",
                  static_cast<long long>(i), out[i], want[i]);
      return 1;
    }
  std::printf(
      "graph_replay: %zu captured launches replayed %d times over %lld elements on %s: ok\n",
      step.launches(), replays, static_cast<long long>(n), x.device().str().c_str());
  return 0;
}

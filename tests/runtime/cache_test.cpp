// The specialization cache: a kernel is traced once per (tile shapes, dtypes, ranks), not once
// per run-time size or scalar value.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

int g_traces = 0;  // how many times the kernel body ran, i.e. was traced
// A new specialization runs the body twice, and compares the traces (a body that depends on
// state the key cannot see is refused: tests/safety/trace).
constexpr int kTracesPerSpecialization = 2;

TESSERA_KERNEL(counted_axpy, Out<float> z, Scalar<float> a, In<float> x) {
  ++g_traces;
  z.store(a * load_like(x, z));
};

template <int N>
TESSERA_KERNEL(counted_fill, Out<float> z) {
  ++g_traces;
  z.store(Tile<float>::full({N}, static_cast<float>(N)));
};

// Runs z = a * x on n elements in tiles of `tile`, and checks the result.
void run_axpy(int64_t n, int64_t tile, float a) {
  std::vector<float> xs(static_cast<size_t>(n));
  std::iota(xs.begin(), xs.end(), 1.0f);
  auto x = from_host(xs, Device::cpu());
  auto z = zeros<float>({n}, Device::cpu()).partition({tile});
  auto [out, scalar, in] = counted_axpy(std::move(z), a, x).sync();
  const std::vector<float> got = std::move(out).unpartition().to_vector();
  for (size_t i = 0; i < xs.size(); ++i) ASSERT_EQ(got[i], a * xs[i]) << "n " << n << ", i " << i;
}

TEST(SpecializationCache, NewRunTimeSizeOrScalarDoesNotRetrace) {
  const int before = g_traces;
  run_axpy(64, 16, 2.0f);
  EXPECT_EQ(g_traces,
            before + kTracesPerSpecialization);  // the first launch with tiles of 16 traces
  run_axpy(1000, 16, 2.0f);                      // another size, ragged
  run_axpy(5, 16, -3.0f);                        // another size and scalar
  EXPECT_EQ(g_traces, before + kTracesPerSpecialization);
}

TEST(SpecializationCache, NewTileShapeRetraces) {
  // Tile shapes no other test here uses, so the count does not depend on which tests ran before.
  const int before = g_traces;
  run_axpy(64, 8, 2.0f);
  run_axpy(64, 24, 2.0f);
  EXPECT_EQ(g_traces, before + 2 * kTracesPerSpecialization);
  run_axpy(100, 24, 1.0f);  // both shapes are cached now
  run_axpy(100, 8, 1.0f);
  EXPECT_EQ(g_traces, before + 2 * kTracesPerSpecialization);
}

TEST(SpecializationCache, EachTemplateInstanceIsItsOwnKernel) {
  const int before = g_traces;
  auto [a] = counted_fill<4>(zeros<float>({8}, Device::cpu()).partition({4})).sync();
  auto [b] = counted_fill<8>(zeros<float>({8}, Device::cpu()).partition({8})).sync();
  auto [c] = counted_fill<4>(zeros<float>({12}, Device::cpu()).partition({4})).sync();
  EXPECT_EQ(g_traces, before + 2 * kTracesPerSpecialization);
  EXPECT_EQ(std::move(a).unpartition().to_vector(), std::vector<float>(8, 4.0f));
  EXPECT_EQ(std::move(b).unpartition().to_vector(), std::vector<float>(8, 8.0f));
  EXPECT_EQ(std::move(c).unpartition().to_vector(), std::vector<float>(12, 4.0f));
}

}  // namespace
}  // namespace tessera::test

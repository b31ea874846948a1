// Reductions along a non-last axis (and along rows the shuffle path does not take) on the GPU,
// against the CPU backend on the same random inputs, ragged edges included. The GPU splits the
// axis among its threads and combines the partials in a tree (codegen_reduce_across.cpp), so:
// integer sums and products, max (NaN in the input), min, any and all must equal the CPU
// backend's bit for bit (docs/dsl.md, "Order of combination"); float sums and products within f32
// summation error; and a second GPU run gives the same bits as the first. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

enum class Kind { Sum, Max, Min, Prod, Any, All };

template <Kind K>
Pad pad_for() {
  if constexpr (K == Kind::Max)
    return Pad::neg_inf();
  else if constexpr (K == Kind::Min)
    return Pad::value_of(INFINITY);
  else if constexpr (K == Kind::Prod || K == Kind::All)
    return Pad::value_of(1);
  else
    return Pad::zero();
}

// z = reduce_K(x's tile, Axis): the input tile has extent Extent along Axis, z's tile 1.
template <Kind K, Element T, int Axis, int Extent>
TESSERA_KERNEL(gpu_reduce_across, Out<T> z, In<T> x) {
  Shape in = z.shape();
  in[Axis] = Extent;
  auto t = in.size() == 2
               ? load(x, {tile_index(0), tile_index(1)}, in, pad_for<K>())
               : load(x, {tile_index(0), tile_index(1), tile_index(2)}, in, pad_for<K>());
  if constexpr (K == Kind::Sum)
    z.store(sum(t, Axis));
  else if constexpr (K == Kind::Max)
    z.store(max(t, Axis));
  else if constexpr (K == Kind::Min)
    z.store(min(t, Axis));
  else if constexpr (K == Kind::Prod)
    z.store(prod(t, Axis));
  else if constexpr (K == Kind::Any)
    z.store(any(t > T(0), Axis).template cast<T>());
  else
    z.store(all(t >= T(0), Axis).template cast<T>());
};

template <Kind K, Element T>
std::vector<T> inputs(int64_t n, std::mt19937& gen) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) {
    const double r = u(gen);
    double x;
    if constexpr (K == Kind::Prod)
      x = std::is_integral_v<T> ? std::floor(r * 19) - 9 : (r < 0.25 ? -1 : 1) * (0.97 + 0.06 * r);
    else if constexpr (K == Kind::Any)
      x = r < 1.0 / 300 ? 1 : -1;
    else if constexpr (K == Kind::All)
      x = r < 1.0 / 300 ? -1 : 1;
    else
      x = std::is_integral_v<T> ? std::floor(r * 2001) - 1000 : r * 20 - 10;
    if constexpr (K == Kind::Max || K == Kind::Min)
      if (!std::is_integral_v<T> && u(gen) < 0.02) x = NAN;
    e = T(static_cast<float>(x));
  }
  return v;
}

template <Element T>
double as_double(T v) {
  return static_cast<double>(static_cast<float>(v));
}

// One shape: the tile `tile` reduced along Axis, over a tensor of `shape` (ragged).
template <Kind K, Element T, int Axis, int Extent, size_t R>
void check(const int64_t (&tile)[R], const int64_t (&shape)[R], const std::string& what) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  std::mt19937 gen{std::random_device{}()};
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  const std::vector<T> xs = inputs<K, T>(n, gen);
  int64_t out[R], out_tile[R];
  for (size_t d = 0; d < R; ++d) {
    out[d] = shape[d];
    out_tile[d] = tile[d];
  }
  out[Axis] = (shape[Axis] + Extent - 1) / Extent;
  out_tile[Axis] = 1;
  auto run = [&](Device d) {
    auto [z, x] = gpu_reduce_across<K, T, Axis, Extent>(
                      zeros<T>(out, d).partition(Shape(out_tile, out_tile + R)),
                      from_host<T>(std::span<const T>(xs), shape, d))
                      .sync();
    return std::move(z).unpartition().to_vector();
  };
  const std::vector<T> cpu = run(Device::cpu()), gpu = run(Device::cuda(0)),
                       again = run(Device::cuda(0));
  ASSERT_EQ(cpu.size(), gpu.size());
  const bool exact = std::is_integral_v<T> || (K != Kind::Sum && K != Kind::Prod);
  // Floats: f32 accumulation over Extent elements (each rounding at most 2^-24 of the partial
  // sums, which a sum's inputs in [-10, 10] bound by 10 * Extent), then the dtype's rounding of
  // the result (the CPU backend rounds its exact result once).
  const double round = std::is_same_v<T, half>       ? 0x1p-11
                       : std::is_same_v<T, bfloat16> ? 0x1p-8
                                                     : 0x1p-24;
  const double bound = K == Kind::Sum ? 10.0 * Extent : 1.0;
  size_t bad = 0, unstable = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    const double a = as_double(cpu[i]), b = as_double(gpu[i]);
    bool ok = std::isnan(a) ? std::isnan(b) : a == b;
    if (!ok && !exact) {
      const double magnitude = std::max(1.0, std::fabs(a));
      ok = std::fabs(a - b) <=
           2 * (Extent * 0x1p-24 * std::max(bound, magnitude) + round * magnitude);
    }
    if (!ok && bad++ < 5)
      ADD_FAILURE() << what << ": element " << i << ": cpu " << a << ", gpu " << b;
    if (std::memcmp(&gpu[i], &again[i], sizeof(T)) != 0) ++unstable;
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << cpu.size() << " differ";
  EXPECT_EQ(unstable, 0u) << what << ": two GPU runs differ in " << unstable << " elements";
}

template <Kind K, Element T>
void all_shapes(const std::string& name) {
  check<K, T, 0, 32>({32, 128}, {70, 300}, name + " [32, 128] axis 0");
  check<K, T, 0, 256>({256, 128}, {600, 200}, name + " [256, 128] axis 0");
  check<K, T, 1, 8>({4, 8, 16}, {9, 20, 33}, name + " [4, 8, 16] axis 1");
  check<K, T, 0, 8>({8, 1024}, {21, 2100}, name + " [8, 1024] axis 0");
  check<K, T, 0, 20>({20, 12}, {45, 29}, name + " [20, 12] axis 0");
  check<K, T, 1, 24>({4, 24}, {11, 53}, name + " [4, 24] axis 1");
  check<K, T, 0, 6>({6, 12}, {13, 29}, name + " [6, 12] axis 0");
}

TEST(GpuReduceAcross, SumsOfIntegersAreExactAndOfFloatsWithinF32Summation) {
  all_shapes<Kind::Sum, int32_t>("sum i32");
  all_shapes<Kind::Sum, float>("sum f32");
  all_shapes<Kind::Sum, half>("sum f16");
  all_shapes<Kind::Sum, bfloat16>("sum bf16");
}

TEST(GpuReduceAcross, MaxAndMinAreTheCpuBackendsWithNaN) {
  all_shapes<Kind::Max, float>("max f32");
  all_shapes<Kind::Max, half>("max f16");
  all_shapes<Kind::Max, bfloat16>("max bf16");
  all_shapes<Kind::Max, int32_t>("max i32");
  all_shapes<Kind::Min, float>("min f32");
  all_shapes<Kind::Min, bfloat16>("min bf16");
  all_shapes<Kind::Min, int32_t>("min i32");
}

TEST(GpuReduceAcross, ProductsAnyAndAll) {
  all_shapes<Kind::Prod, int32_t>("prod i32");
  all_shapes<Kind::Prod, float>("prod f32");
  all_shapes<Kind::Any, float>("any f32");
  all_shapes<Kind::Any, int32_t>("any i32");
  all_shapes<Kind::All, float>("all f32");
  all_shapes<Kind::All, int32_t>("all i32");
}

}  // namespace
}  // namespace tessera::test

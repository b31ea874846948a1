// fp8 on the GPU: the device's conversions (cvt.rn.satfinite on sm_89+, the integer fallback in
// code built for sm_80, run again by the ctest entry gpu_fp8_on_sm80_code) give the host's bytes
// bit for bit on a few million floats (every bit pattern class: NaN, infinities, subnormals, and
// exact ties in each format), and decode all 256 codes exactly. load_t, now read straight into
// shared memory transposed, gives the CPU backend's tiles. Skips without a GPU.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <tessera/runtime/gpu.hpp>
#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element From, Element To>
TESSERA_KERNEL(gpu_fp8_cast, Out<To> z, In<From> x) {
  z.store(load_like(x, z).template cast<To>());
};

template <Element T>
TESSERA_KERNEL(gpu_load_t, Out<T> z, In<T> x) {
  z.store(load_t(x, {tile_index(0), tile_index(1)}, z.shape()));
};

// Random f32 values: arbitrary bit patterns, values spread over the format's range, and exact
// midpoints between neighbouring fp8 values (ties), a third each.
template <class F8>
std::vector<float> inputs(size_t n) {
  std::mt19937 rng(2026);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_int_distribution<int> code(0, 255);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::vector<float> xs(n);
  for (size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) {
      xs[i] = std::bit_cast<float>(bits(rng));
    } else if (i % 3 == 1) {
      xs[i] = static_cast<float>(unit(rng) * std::ldexp(1.0, static_cast<int>(i / 3 % 44) - 22));
    } else {
      const auto c = static_cast<uint8_t>(code(rng));
      const float a = F8::from_bits(c), b = F8::from_bits(static_cast<uint8_t>(c + 1));
      xs[i] = std::isfinite(a) && std::isfinite(b) ? (a + b) / 2 : a;
    }
  }
  return xs;
}

template <class F8>
void expect_conversion_matches_the_host(const char* name) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const Device gpu = Device::cuda(0);
  const size_t n = 3 << 20;
  const std::vector<float> xs = inputs<F8>(n);
  auto [z, x] = gpu_fp8_cast<float, F8>(zeros<F8>({static_cast<int64_t>(n)}, gpu).partition({4096}),
                                        from_host(xs, gpu))
                    .sync();
  const std::vector<F8> got = std::move(z).unpartition().to(Device::cpu()).to_vector();
  ASSERT_EQ(got.size(), n);
  int wrong = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t want = F8(xs[i]).bits;
    if (got[i].bits != want && wrong++ < 8)
      ADD_FAILURE() << name << ": " << xs[i] << " (bits 0x" << std::hex
                    << std::bit_cast<uint32_t>(xs[i]) << ") became 0x" << int{got[i].bits}
                    << " on the GPU, 0x" << int{want} << " on the host" << std::dec;
  }
  EXPECT_EQ(wrong, 0) << "of " << n;
}

TEST(Fp8Gpu, E4m3ConversionOfMillionsOfFloatsMatchesTheHostBitForBit) {
  expect_conversion_matches_the_host<float8_e4m3>("e4m3");
}
TEST(Fp8Gpu, E5m2ConversionOfMillionsOfFloatsMatchesTheHostBitForBit) {
  expect_conversion_matches_the_host<float8_e5m2>("e5m2");
}

template <class F8>
void expect_every_code_decodes_exactly() {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  const Device gpu = Device::cuda(0);
  std::vector<F8> codes;
  for (int c = 0; c < 256; ++c) codes.push_back(F8::from_bits(static_cast<uint8_t>(c)));
  auto [z, x] =
      gpu_fp8_cast<F8, float>(zeros<float>({256}, gpu).partition({128}), from_host(codes, gpu))
          .sync();
  const std::vector<float> got = std::move(z).unpartition().to(Device::cpu()).to_vector();
  for (int c = 0; c < 256; ++c) {
    const float want = codes[static_cast<size_t>(c)];
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got[static_cast<size_t>(c)])) << "code " << c;
    else
      EXPECT_EQ(std::bit_cast<uint32_t>(got[static_cast<size_t>(c)]), std::bit_cast<uint32_t>(want))
          << "code " << c;
  }
}

TEST(Fp8Gpu, EveryE4m3CodeDecodesExactly) {
  expect_every_code_decodes_exactly<float8_e4m3>();
}
TEST(Fp8Gpu, EveryE5m2CodeDecodesExactly) {
  expect_every_code_decodes_exactly<float8_e5m2>();
}

// load_t of a ragged tensor on the GPU and the CPU backend: the same tiles, bit for bit.
template <Element T>
void expect_load_t_matches_the_cpu(int64_t rows, int64_t cols, Shape tile) {
  std::string why;
  if (!runtime::gpu_usable(&why)) GTEST_SKIP() << why;
  std::vector<T> xs;
  for (int64_t i = 0; i < rows * cols; ++i) xs.push_back(T(static_cast<float>(i % 997) - 498));
  auto run = [&](Device d) {
    auto [z, x] =
        gpu_load_t<T>(zeros<T>({cols, rows}, d).partition(tile), from_host(xs, {rows, cols}, d))
            .sync();
    return std::move(z).unpartition().to(Device::cpu()).to_vector();
  };
  const std::vector<T> gpu = run(Device::cuda(0)), cpu = run(Device::cpu());
  ASSERT_EQ(gpu.size(), cpu.size());
  for (size_t i = 0; i < gpu.size(); ++i)
    ASSERT_EQ(static_cast<float>(gpu[i]), static_cast<float>(cpu[i])) << "element " << i;
}

TEST(Fp8Gpu, LoadTransposedMatchesTheCpuF32) {
  expect_load_t_matches_the_cpu<float>(1000, 333, {64, 64});
}
TEST(Fp8Gpu, LoadTransposedMatchesTheCpuF16) {
  expect_load_t_matches_the_cpu<half>(517, 1030, {128, 64});
}
TEST(Fp8Gpu, LoadTransposedMatchesTheCpuE4m3) {
  expect_load_t_matches_the_cpu<float8_e4m3>(300, 260, {32, 128});
}

}  // namespace
}  // namespace tessera::test

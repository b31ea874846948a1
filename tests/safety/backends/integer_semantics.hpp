// Integer semantics that both backends share (class 10 of issue 10): an i64 above 2^53 survives a
// copy, and integer overflow wraps modulo 2^width (two's complement), as the GPU's integer
// instructions do, never saturating. Each check runs one kernel on `device` and compares with
// the wrapped result computed here in unsigned arithmetic (where wrapping is defined).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::test::integers {

using namespace tessera::tile;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

inline int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
inline int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// Values a double cannot hold (2^53 + 1 and neighbours), the extremes, and small ones.
inline std::vector<int64_t> large_values() {
  const int64_t p53 = int64_t{1} << 53;
  return {p53 + 1,
          p53 + 3,
          -(p53 + 1),
          kMax,
          kMin,
          kMax - 1,
          kMin + 1,
          (int64_t{1} << 62) + 7,
          123456789012345679,
          -1,
          0,
          1,
          2,
          3,
          5,
          7};
}

template <Element T>
TESSERA_KERNEL(copy_tiles, Out<T> z, In<T> x) {
  z.store(load_like(x, z));
};
TESSERA_KERNEL(add_one_i64, Out<int64_t> z, In<int64_t> x) {
  z.store(load_like(x, z) + int64_t{1});
};
TESSERA_KERNEL(square_i64, Out<int64_t> z, In<int64_t> x) {
  const Tile<int64_t> v = load_like(x, z);
  z.store(v * v);
};
TESSERA_KERNEL(add_i32, Out<int32_t> z, In<int32_t> x, In<int32_t> y) {
  z.store(load_like(x, z) + load_like(y, z));
};
TESSERA_KERNEL(add_i8, Out<int8_t> z, In<int8_t> x, In<int8_t> y) {
  z.store(load_like(x, z) + load_like(y, z));
};
// Sums each row of 16 into one element.
TESSERA_KERNEL(row_sums_i64, Out<int64_t> z, In<int64_t, 2> x) {
  z.store(sum(load(x, {z.tile_index(0), 0}, {4, 16}), 1).reshape({4}));
};

// Constants a double cannot hold, written in the kernel: as an operand and as a filled tile.
constexpr int64_t kBigConstant = (int64_t{1} << 53) + 1;
TESSERA_KERNEL(add_big_constant_i64, Out<int64_t> z, In<int64_t> x) {
  z.store(load_like(x, z) + kBigConstant + Tile<int64_t>::full(z.shape(), kMax - 2));
};

template <Element T>
std::vector<T> copied(const std::vector<T>& xs, Device device) {
  const int64_t n = static_cast<int64_t>(xs.size());
  auto out = std::get<0>(
      copy_tiles<T>(zeros<T>({n}, device).partition({8}), from_host(xs, device)).sync());
  return std::move(out).unpartition().to_vector();
}

inline void i64_above_2_pow_53_survives_a_copy(Device device) {
  EXPECT_EQ(copied(large_values(), device), large_values());
}

inline void u8_and_i8_survive_a_copy(Device device) {
  std::vector<uint8_t> u(16);
  std::vector<int8_t> s(16);
  for (int i = 0; i < 16; ++i) {
    u[i] = static_cast<uint8_t>(255 - 7 * i);
    s[i] = static_cast<int8_t>(-128 + 17 * i);
  }
  EXPECT_EQ(copied(u, device), u);
  EXPECT_EQ(copied(s, device), s);
}

inline void i64_add_wraps(Device device) {
  const std::vector<int64_t> xs = large_values();
  auto out = std::get<0>(
      add_one_i64(zeros<int64_t>({16}, device).partition({8}), from_host(xs, device)).sync());
  const std::vector<int64_t> got = std::move(out).unpartition().to_vector();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], wrap_add(xs[i], 1)) << "x " << xs[i];
  EXPECT_EQ(got[3], kMin);  // kMax + 1 wraps, it does not saturate
}

inline void i64_multiply_wraps(Device device) {
  const std::vector<int64_t> xs = large_values();
  auto out = std::get<0>(
      square_i64(zeros<int64_t>({16}, device).partition({8}), from_host(xs, device)).sync());
  const std::vector<int64_t> got = std::move(out).unpartition().to_vector();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_EQ(got[i], wrap_mul(xs[i], xs[i])) << "x " << xs[i];
}

inline void narrow_integer_adds_wrap(Device device) {
  const std::vector<int32_t> a{
      std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min(), 5, -5, 0, 1, 2, 3};
  const std::vector<int32_t> b{1, -1, 7, -7, 0, 1, 2, 3};
  auto z = std::get<0>(add_i32(zeros<int32_t>({8}, device).partition({8}), from_host(a, device),
                               from_host(b, device))
                           .sync());
  EXPECT_EQ(std::move(z).unpartition().to_vector(),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::max(), 12, -12, 0, 2, 4, 6}));
  const std::vector<int8_t> c{127, -128, 100, -100, 0, 1, 2, 3};
  const std::vector<int8_t> d{1, -1, 100, -100, 0, 1, 2, 3};
  auto w = std::get<0>(
      add_i8(zeros<int8_t>({8}, device).partition({8}), from_host(c, device), from_host(d, device))
          .sync());
  EXPECT_EQ(std::move(w).unpartition().to_vector(),
            (std::vector<int8_t>{-128, 127, -56, 56, 0, 2, 4, 6}));
}

inline void i64_constants_are_exact(Device device) {
  const std::vector<int64_t> xs = large_values();
  auto out = std::get<0>(
      add_big_constant_i64(zeros<int64_t>({16}, device).partition({8}), from_host(xs, device))
          .sync());
  const std::vector<int64_t> got = std::move(out).unpartition().to_vector();
  for (size_t i = 0; i < xs.size(); ++i)
    EXPECT_EQ(got[i], wrap_add(wrap_add(xs[i], kBigConstant), kMax - 2)) << "x " << xs[i];
}

inline void i64_sum_wraps_and_stays_exact(Device device) {
  std::vector<int64_t> xs(4 * 16);
  std::vector<int64_t> want(4, 0);
  for (size_t r = 0; r < 4; ++r)
    for (size_t c = 0; c < 16; ++c) {
      // Row 0 overflows several times; the others hold values a double would round.
      xs[r * 16 + c] = r == 0 ? kMax - static_cast<int64_t>(c)
                              : (int64_t{1} << 53) + static_cast<int64_t>(2 * c + r);
      want[r] = wrap_add(want[r], xs[r * 16 + c]);
    }
  auto out = std::get<0>(
      row_sums_i64(zeros<int64_t>({4}, device).partition({4}), from_host(xs, {4, 16}, device))
          .sync());
  EXPECT_EQ(std::move(out).unpartition().to_vector(), want);
}

}  // namespace tessera::test::integers

// Classes 8 and 4 of issue 10 on the tile path, as checks that run on any device (the CPU test
// and the GPU test call them; tests/safety/CMakeLists.txt):
//  - class 8, lost arguments: a launch refused by any check leaves the caller's partitions and
//    tensors intact (same data, still launchable, no handle kept behind);
//  - class 8, lost errors: a launch's error is its own (another launch's sync() never throws
//    it), and a Future dropped without sync() keeps its error for the thread's next launch;
//  - class 4, silent narrowing: a scalar whose value its parameter's type would change is refused
//    at bind, naming kernel, parameter and value; one that fits binds unchanged.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test::launch_safety {

using namespace tessera::tile;

TESSERA_KERNEL(copy_in, Out<float> z, In<float> x) {
  z.store(load_like(x, z));
};
// Each block reads the tile after its own, unpadded: with x as long as z, the last block reads
// past the end of x (a BoundsError of the launch's work, at sync).
TESSERA_KERNEL(next_tile, Out<float> z, In<float> x) {
  z.store(load(x, {z.tile_index(0) + 1}, {8}, Pad::none()));
};
TESSERA_KERNEL(first_row, Out<float> z, In<float, 2> x) {
  z.store(load(x, {0, z.tile_index(0)}, {1, 8}).reshape({8}));
};
TESSERA_KERNEL(fill_both, Out<float> a, Out<float> b) {
  a.store(Tile<float>::full(a.shape(), 1.0f));
  b.store(Tile<float>::full(b.shape(), 2.0f));
};
// Only block 0 stores: refused at trace (the other tiles would keep stale contents).
TESSERA_KERNEL(stores_sometimes, Out<float> z, In<float> x) {
  if_(z.tile_index(0) == 0, [&] { z.store(load_like(x, z)); });
};
// A bool scalar, stored as an i32 (a bool tensor has no to_vector()).
TESSERA_KERNEL(put_flag, Out<int32_t> z, Scalar<bool> v) {
  z.store(broadcast(v.cast<int32_t>(), z.shape()));
};
template <Element T>
TESSERA_KERNEL(put, Out<T> z, Scalar<T> v) {
  z.store(broadcast(v, z.shape()));
};

// 0, 1, 2, ... as floats.
inline std::vector<float> iota(size_t n, float from = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = from + static_cast<float>(i);
  return v;
}

// An output of 16 elements (a known pattern, to see that nothing wrote it), cut into tiles of 8.
inline Partition<float, 1> pattern_output(Device d) {
  return from_host(iota(16, 100), d).partition({8});
}

// The property of class 8: after a refused launch, the caller's partition is intact. It holds
// its data, it is the only handle to its storage, and a correct launch with it runs.
inline void expect_intact_and_launchable(Partition<float, 1>& z, Device d) {
  ASSERT_EQ(z.shape(), Shape{16});
  ASSERT_EQ(z.tile_shape(), Shape{8});
  Tensor<float, 1> t = std::move(z).unpartition();
  EXPECT_EQ(t.to_vector(), iota(16, 100)) << "the refused launch changed the output's data";
  auto x = from_host(iota(16), d);
  auto [out, in] = copy_in(std::move(t).partition({8}), x).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), iota(16));
}

// ---- class 8: nothing lost when a launch is refused -------------------------------------------

inline void rank_error_leaves_arguments_intact(Device d) {
  auto z = pattern_output(d);
  Tensor<float> x = from_host(iota(8), d);  // rank 1; first_row declares In<float, 2>
  const std::string m = error_of<LaunchError>([&] { (void)first_row(std::move(z), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'first_row': argument 2 ('x', In) has rank 1, but the kernel declares rank 2");
  EXPECT_EQ(x.handle().use_count(), 1) << "the refused launch kept a handle to its input";
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  expect_intact_and_launchable(z, d);
}

inline void grid_error_leaves_both_outputs_intact(Device d) {
  auto a = pattern_output(d);                           // grid [2]
  auto b = from_host(iota(16, 100), d).partition({4});  // grid [4]
  const std::string m = error_of<LaunchError>([&] { (void)fill_both(std::move(a), std::move(b)); });
  EXPECT_EQ(after_location(m),
            "kernel 'fill_both': argument 2 ('b', Out) is cut into a grid of [4] tiles, but "
            "argument 1 ('a', Out) into [2]; the outputs of one launch share its grid");
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  expect_intact_and_launchable(a, d);
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  ASSERT_EQ(b.tile_shape(), Shape{4});
  EXPECT_EQ(std::move(b).unpartition().to_vector(), iota(16, 100));
}

inline void moved_from_input_leaves_the_output_intact(Device d) {
  auto z = pattern_output(d);
  auto x = from_host(iota(16), d);
  auto elsewhere = std::move(x);
  // NOLINTNEXTLINE(bugprone-use-after-move): the attack passes the moved-from x
  const std::string m = error_of<OwnershipError>([&] {
    (void)copy_in(std::move(z), x);  // NOLINT(bugprone-use-after-move): the attack
  });
  EXPECT_EQ(after_location(m),
            "kernel 'copy_in': argument 2 ('x', In) is a moved-from tensor; use the handle that "
            "the operation it was moved into returned");
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  expect_intact_and_launchable(z, d);
}

inline void trace_error_leaves_arguments_intact(Device d) {
  auto z = pattern_output(d);
  auto x = from_host(iota(16), d);
  const std::string m = error_of<KernelError>([&] { (void)stores_sometimes(std::move(z), x); });
  EXPECT_EQ(after_location(m),
            "kernel 'stores_sometimes' stores to its Out parameter 'z' only on some paths (under "
            "an if_ without a store in both branches, or in a for_range that may run zero times), "
            "so some of its tiles could keep whatever they held before; store to it "
            "unconditionally, outside the if_ or the loop (select the value with where(), or "
            "carry it out of the loop)");
  EXPECT_EQ(x.handle().use_count(), 1) << "the refused launch kept a handle to its input";
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  expect_intact_and_launchable(z, d);
}

inline void narrowing_error_leaves_arguments_intact(Device d) {
  auto z = from_host(std::vector<int32_t>(16, 7), d).partition({8});
  const std::string m =
      error_of<LaunchError>([&] { (void)put<int32_t>(std::move(z), int64_t{1} << 40); });
  EXPECT_NE(m.find("1099511627776"), std::string::npos) << m;
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  ASSERT_EQ(z.shape(), Shape{16});
  auto [out, v] = put<int32_t>(std::move(z), int64_t{-5}).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<int32_t>(16, -5));
}

// ---- class 8: errors are per launch ------------------------------------------------------------

// Two launches of one kernel pending at once, the first failing: each sync() reports only its own
// launch's outcome, in either order.
inline void each_launch_reports_only_its_own_error(Device d, bool failing_first) {
  auto short_x = from_host(iota(16), d);  // the last block reads past it
  auto long_x = from_host(iota(24), d);   // every block stays inside
  auto bad = next_tile(pattern_output(d), short_x).async();
  auto good = next_tile(pattern_output(d), long_x).async();
  auto bad_sync = [&] { (void)std::move(bad).sync(); };
  if (failing_first) {
    EXPECT_THROW(bad_sync(), BoundsError);
  }
  auto [out, in] = std::move(good).sync();  // must not throw the other launch's error
  EXPECT_EQ(std::move(out).unpartition().to_vector(), iota(16, 8));
  if (!failing_first) {
    EXPECT_THROW(bad_sync(), BoundsError);
  }
  // And a third launch of the kernel starts clean.
  auto [out3, in3] = next_tile(pattern_output(d), long_x).sync();
  EXPECT_EQ(std::move(out3).unpartition().to_vector(), iota(16, 8));
}

// ---- class 8: an error nobody asked for is not dropped -----------------------------------------

// The message of the error a failing next_tile launch throws at sync().
inline std::string next_tile_error(Device d) {
  auto x = from_host(iota(16), d);
  return error_of<BoundsError>([&] { (void)next_tile(pattern_output(d), x).sync(); });
}

// The message with the kernel's definition site ("(defined at file:line:col)") cut out, which the
// test checks separately, and the element a failing load reached left open: on a GPU, whichever
// thread of the failing block reports first names its own element.
inline std::string without_site(const std::string& m) {
  const std::string no_site = std::regex_replace(m, std::regex(R"( \(defined at [^)]*\))"), "");
  return std::regex_replace(no_site, std::regex("reaches element [0-9]+"), "reaches element N");
}

inline void dropped_failing_future_refuses_the_next_launch(Device d) {
  const std::string original = next_tile_error(d);
  {
    auto x = from_host(iota(16), d);
    auto dropped = next_tile(pattern_output(d), x).async();
  }  // destroyed without sync(): its error is kept, not swallowed
  auto z = pattern_output(d);
  auto x = from_host(iota(16), d);
  const std::string m = error_of<LostLaunchError>([&] { (void)copy_in(std::move(z), x); });
  EXPECT_EQ(without_site(m),
            without_site("a launch of kernel 'next_tile' failed, and its Future was destroyed "
                         "without sync() or wait(), so nobody saw its error: \"" +
                         original +
                         "\". This launch was refused before it took its arguments, which the "
                         "caller keeps; call sync() or wait() on every Future to get its error "
                         "where it happens"));
  EXPECT_NE(m.find("(defined at " __FILE__ ":"), std::string::npos) << m;
  EXPECT_EQ(x.handle().use_count(), 1);
  // The refused launch lost nothing, and the error is reported once: the retry runs.
  // NOLINTNEXTLINE(bugprone-use-after-move): a refused launch takes nothing
  expect_intact_and_launchable(z, d);
}

// The twin: a dropped Future whose work succeeded leaves nothing behind.
inline void dropped_successful_future_leaves_nothing(Device d) {
  {
    auto x = from_host(iota(16), d);
    auto dropped = copy_in(pattern_output(d), x).async();
  }
  EXPECT_NO_THROW(check_lost_errors());
  auto z = pattern_output(d);
  expect_intact_and_launchable(z, d);
}

// An error already thrown by wait() has been seen: dropping the Future afterwards loses nothing.
inline void error_seen_through_wait_is_not_kept(Device d) {
  {
    auto x = from_host(iota(16), d);
    auto f = next_tile(pattern_output(d), x).async();
    EXPECT_THROW(f.wait(), BoundsError);
  }
  EXPECT_NO_THROW(check_lost_errors());
}

// Several dropped: the first is quoted, the rest counted; check_lost_errors() throws it on
// demand, once.
inline void several_lost_errors_are_counted_and_thrown_once(Device d) {
  const std::string original = next_tile_error(d);
  auto x = from_host(iota(24), d);
  {
    // Launched first, dropped together (a launch after a drop would be refused with its error).
    using F = decltype(next_tile(pattern_output(d), x));
    std::vector<F> dropped;
    for (int i = 0; i < 3; ++i) dropped.push_back(next_tile(pattern_output(d), x.slice(0, 0, 16)));
  }
  const std::string m = error_of<LostLaunchError>([] { check_lost_errors(); });
  EXPECT_EQ(without_site(m),
            without_site("a launch of kernel 'next_tile' failed, and its Future was destroyed "
                         "without sync() or wait(), so nobody saw its error: \"" +
                         original +
                         "\" (and 2 more failed launches lost since); call sync() or wait() on "
                         "every Future to get its error where it happens"));
  EXPECT_NO_THROW(check_lost_errors());
}

// Assigning over a pending Future drops it as surely as destroying it.
inline void future_assigned_over_keeps_its_error(Device d) {
  auto x = from_host(iota(16), d);
  auto f = next_tile(pattern_output(d), x).async();
  f = copy_in(pattern_output(d), x).async();  // the failing launch's Future is gone
  (void)std::move(f).sync();
  EXPECT_THROW(check_lost_errors(), LostLaunchError);
}

// The error belongs to the thread that dropped the Future: another thread's launches run, and
// the dropping thread, ending with it unseen, prints it.
inline void lost_error_stays_on_the_thread_that_dropped_it(Device d) {
  testing::internal::CaptureStderr();
  std::thread([d] {
    auto x = from_host(iota(16), d);
    (void)next_tile(pattern_output(d), x).async();
  }).join();
  const std::string printed = testing::internal::GetCapturedStderr();
  EXPECT_NE(printed.find("tessera: at thread exit, a lost launch error: a launch of kernel "
                         "'next_tile'"),
            std::string::npos)
      << printed;
  EXPECT_NO_THROW(check_lost_errors());
  auto z = pattern_output(d);
  expect_intact_and_launchable(z, d);
}

// ---- class 4: no value-changing narrowing at bind ---------------------------------------------

// The error of binding `value` to put<T>'s scalar, without its location.
template <Element T, class V>
std::string narrowing_error(Device d, V value) {
  auto z = from_host(std::vector<T>(16, T{}), d).partition({8});
  return after_location(error_of<LaunchError>([&] { (void)put<T>(std::move(z), value); }));
}
// What put<T> stores for `value` (every element).
template <Element T, class V>
std::vector<T> bound(Device d, V value) {
  auto z = from_host(std::vector<T>(16, T{}), d).partition({8});
  auto [out, v] = put<T>(std::move(z), value).sync();
  return std::move(out).unpartition().to_vector();
}

inline void int64_past_i32_is_refused(Device d) {
  EXPECT_EQ(narrowing_error<int32_t>(d, int64_t{1} << 32),
            "kernel 'put': argument 2 ('v', Scalar) is 4294967296, which does not fit an i32 "
            "(-2147483648 to 2147483647); binding it would change its value; pass a value that "
            "fits, or declare the parameter with a type that holds it");
  EXPECT_EQ(narrowing_error<int32_t>(d, int64_t{-2147483649}),
            "kernel 'put': argument 2 ('v', Scalar) is -2147483649, which does not fit an i32 "
            "(-2147483648 to 2147483647); binding it would change its value; pass a value that "
            "fits, or declare the parameter with a type that holds it");
  // The twins: the extremes of i32, given as 64-bit values, bind unchanged.
  EXPECT_EQ(bound<int32_t>(d, int64_t{2147483647}), std::vector<int32_t>(16, 2147483647));
  EXPECT_EQ(bound<int32_t>(d, int64_t{-2147483648}), std::vector<int32_t>(16, -2147483647 - 1));
}

inline void negative_into_unsigned_is_refused(Device d) {
  EXPECT_EQ(narrowing_error<uint8_t>(d, -1),
            "kernel 'put': argument 2 ('v', Scalar) is -1, which does not fit a u8 (0 to 255); "
            "binding it would change its value; pass a value that fits, or declare the parameter "
            "with a type that holds it");
  EXPECT_EQ(narrowing_error<uint8_t>(d, 256),
            "kernel 'put': argument 2 ('v', Scalar) is 256, which does not fit a u8 (0 to 255); "
            "binding it would change its value; pass a value that fits, or declare the parameter "
            "with a type that holds it");
  EXPECT_EQ(bound<uint8_t>(d, 255), std::vector<uint8_t>(16, 255));
  EXPECT_EQ(bound<uint8_t>(d, 0), std::vector<uint8_t>(16, 0));
}

inline void uint64_past_i64_is_refused(Device d) {
  EXPECT_EQ(narrowing_error<int64_t>(d, std::numeric_limits<uint64_t>::max()),
            "kernel 'put': argument 2 ('v', Scalar) is 18446744073709551615, which does not fit "
            "an i64 (-9223372036854775808 to 9223372036854775807); binding it would change its "
            "value; pass a value that fits, or declare the parameter with a type that holds it");
  const auto max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(bound<int64_t>(d, max), std::vector<int64_t>(16, std::numeric_limits<int64_t>::max()));
}

inline void fraction_into_integer_is_refused(Device d) {
  EXPECT_EQ(narrowing_error<int32_t>(d, 2.5),
            "kernel 'put': argument 2 ('v', Scalar) is 2.5, which has a fractional part, which an "
            "i32 cannot hold; binding it would change its value; round it explicitly "
            "(std::lround), or declare the parameter with a floating-point type");
  // An f16 value converts the same way.
  EXPECT_EQ(narrowing_error<int32_t>(d, half(0.5f)),
            "kernel 'put': argument 2 ('v', Scalar) is 0.5, which has a fractional part, which an "
            "i32 cannot hold; binding it would change its value; round it explicitly "
            "(std::lround), or declare the parameter with a floating-point type");
  // The twins: a whole double binds exactly, even past 2^53 into an i64.
  EXPECT_EQ(bound<int32_t>(d, 3.0), std::vector<int32_t>(16, 3));
  EXPECT_EQ(bound<int64_t>(d, 9007199254740994.0),
            std::vector<int64_t>(16, int64_t{9007199254740994}));
}

inline void double_out_of_integer_range_or_not_finite_is_refused(Device d) {
  EXPECT_EQ(narrowing_error<int64_t>(d, 9223372036854775808.0),
            "kernel 'put': argument 2 ('v', Scalar) is 9223372036854775808, which does not fit an "
            "i64 (-9223372036854775808 to 9223372036854775807); binding it would change its "
            "value; pass a value that fits, or declare the parameter with a type that holds it");
  EXPECT_EQ(narrowing_error<int64_t>(d, std::nan("")),
            "kernel 'put': argument 2 ('v', Scalar) is NaN, which is not a finite number, which "
            "an i64 cannot hold; binding it would change its value; pass a value that fits, or "
            "declare the parameter with a type that holds it");
  EXPECT_EQ(bound<int64_t>(d, -9223372036854775808.0),
            std::vector<int64_t>(16, std::numeric_limits<int64_t>::min()));
}

inline void double_past_the_float_range_is_refused(Device d) {
  EXPECT_EQ(narrowing_error<float>(d, 1e300),
            "kernel 'put': argument 2 ('v', Scalar) is 1e+300, which does not fit an f32 (largest "
            "finite value about 3.40e+38); binding it would change its value; pass a value that "
            "fits, or declare the parameter with a type that holds it");
  EXPECT_EQ(narrowing_error<half>(d, 70000.0),
            "kernel 'put': argument 2 ('v', Scalar) is 70000, which does not fit an f16 (largest "
            "finite value 65504); binding it would change its value; pass a value that fits, or "
            "declare the parameter with a type that holds it");
  // The twins: in range binds (0.1 rounds to the nearest f32, as arithmetic does), and an
  // infinity given is an infinity bound.
  EXPECT_EQ(bound<float>(d, 0.1), std::vector<float>(16, 0.1f));
  EXPECT_EQ(bound<float>(d, 3e38), std::vector<float>(16, 3e38f));
  EXPECT_EQ(bound<float>(d, HUGE_VAL),
            std::vector<float>(16, std::numeric_limits<float>::infinity()));
  const std::vector<half> h = bound<half>(d, 65504.0);
  for (half v : h) EXPECT_EQ(static_cast<float>(v), 65504.0f);
}

inline void non_boolean_into_bool_is_refused(Device d) {
  auto flag = [&](auto value) {
    auto z = from_host(std::vector<int32_t>(16, 7), d).partition({8});
    return put_flag(std::move(z), value);
  };
  EXPECT_EQ(after_location(error_of<LaunchError>([&] { (void)flag(2); })),
            "kernel 'put_flag': argument 2 ('v', Scalar) is 2, which is neither 0 nor 1, the only "
            "values of a bool; binding it would change its value; pass a value that fits, or "
            "declare the parameter with a type that holds it");
  EXPECT_EQ(after_location(error_of<LaunchError>([&] { (void)flag(0.5); })),
            "kernel 'put_flag': argument 2 ('v', Scalar) is 0.5, which is neither 0 nor 1, the "
            "only values of a bool; binding it would change its value; pass a value that fits, or "
            "declare the parameter with a type that holds it");
  auto [one, v1] = flag(1).sync();
  EXPECT_EQ(std::move(one).unpartition().to_vector(), std::vector<int32_t>(16, 1));
  auto [yes, v2] = flag(true).sync();
  EXPECT_EQ(std::move(yes).unpartition().to_vector(), std::vector<int32_t>(16, 1));
  auto [no, v3] = flag(0).sync();
  EXPECT_EQ(std::move(no).unpartition().to_vector(), std::vector<int32_t>(16, 0));
}

}  // namespace tessera::test::launch_safety

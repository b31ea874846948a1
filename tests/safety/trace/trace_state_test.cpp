// Class 9 of issue 10: a kernel body is traced once per specialization, so what it reads must be
// a function of the specialization key. A body that reads changing host state is refused: every
// new specialization is traced twice and the two traces compared, and TESSERA_CHECK=trace
// compares each launch's trace with the one its specialization was compiled from. Each attack has
// a twin that runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

int g_line = 0;
template <class F>
void at(int line, F&& f) {
  g_line = line;
  f();
}

const char* const kWhy =
    "; its body depends on state the specialization key cannot see (a host variable that "
    "changed, a counter, a random number, or a tile kept in a static from an earlier trace), and "
    "only one trace would ever run; pass such a value as a Scalar<T> parameter, make it "
    "constexpr, or make the tile inside the body";

// Attack: a counter bumped by every trace becomes a constant of the kernel.
int g_traced = 0;
TESSERA_KERNEL(counts_its_traces, Out<float> z) {
  const float n = static_cast<float>(++g_traced);
  at(__LINE__, [&] { z.store(Tile<float>::full(z.shape(), n)); });
};
// Twin: the value comes in as a Scalar, which the launch passes each time.
TESSERA_KERNEL(takes_a_scalar, Out<float> z, Scalar<float> n) {
  z.store(Tile<float>::full(z.shape(), 1.0f) * n);
};

TEST(TraceState, ABodyThatCountsItsTracesIsRejectedAtTheLineThatUsesTheCount) {
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  g_line = 0;
  const std::string m = error_of<KernelError>([&] { (void)counts_its_traces(std::move(z)); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  const std::string want_start =
      "kernel 'counts_its_traces' traced differently for one specialization: the first trace has "
      "'%0 = constant ";
  EXPECT_EQ(after_location(m).substr(0, want_start.size()), want_start);
  EXPECT_NE(m.find(kWhy), std::string::npos) << m;
}

TEST(TraceState, AValuePassedAsAScalarChangesEveryLaunch) {
  for (float n : {1.0f, 2.0f, 5.0f}) {
    auto z = zeros<float>({16}, Device::cpu()).partition({8});
    auto out = std::get<0>(takes_a_scalar(std::move(z), n).sync());
    EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(16, n));
  }
}

// Attack: the body's structure depends on a random number.
TESSERA_KERNEL(random_structure, Out<float> z) {
  Tile<float> v = Tile<float>::zeros(z.shape());
  // Enough draws that two traces agree with probability 2^-32.
  for (int i = 0; i < 32; ++i)
    if (std::rand() % 2)
      v = v + 1.0f;
    else
      v = v * 2.0f;
  z.store(v);
};

TEST(TraceState, ABodyShapedByRandomNumbersIsRejected) {
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  const std::string m = error_of<KernelError>([&] { (void)random_structure(std::move(z)); });
  EXPECT_NE(m.find("kernel 'random_structure' traced differently for one specialization: the "
                   "first trace has '"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(kWhy), std::string::npos) << m;
}

// Attack: a tile kept in a static outlives the trace that made it; the next trace would use a
// value of another function.
TESSERA_KERNEL(static_tile, Out<float> z) {
  static Tile<float> kept = Tile<float>::full({8}, 3.0f);
  z.store(kept);
};
// Twin: the tile is made inside the body, in each trace.
TESSERA_KERNEL(tile_made_in_body, Out<float> z) {
  const Tile<float> made = Tile<float>::full({8}, 3.0f);
  z.store(made);
};

TEST(TraceState, ATileKeptInAStaticIsRejected) {
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  const std::string m = error_of<KernelError>([&] { (void)static_tile(std::move(z)); });
  EXPECT_EQ(m.rfind("kernel 'static_tile' traced differently for one specialization: the first "
                    "trace succeeded where the second trace failed with \"",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("error: store uses an undefined value"), std::string::npos) << m;
  EXPECT_NE(m.find(kWhy), std::string::npos) << m;
}

TEST(TraceState, ATileMadeInTheBodyRuns) {
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  auto [out] = tile_made_in_body(std::move(z)).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(16, 3.0f));
}

// Attack: a host global read at trace time and changed between launches of one specialization.
// Both traces of the first launch agree, so only TESSERA_CHECK=trace sees the change.
float g_scale = 1.0f;
TESSERA_KERNEL(reads_a_global, Out<float> z) {
  at(__LINE__, [&] { z.store(Tile<float>::full(z.shape(), g_scale)); });
};
// Twin: the same global, unchanged between launches, under TESSERA_CHECK=trace.
TESSERA_KERNEL(reads_a_constant_global, Out<float> z) {
  z.store(Tile<float>::full(z.shape(), g_scale));
};

class CheckTraceOnEveryLaunch : public ::testing::Test {
 protected:
  void SetUp() override { setenv("TESSERA_CHECK", "trace", 1); }
  void TearDown() override { unsetenv("TESSERA_CHECK"); }
};

TEST_F(CheckTraceOnEveryLaunch, AGlobalChangedBetweenLaunchesIsRejectedOnTheNextLaunch) {
  g_scale = 1.0f;
  (void)reads_a_global(zeros<float>({16}, Device::cpu()).partition({8})).sync();
  g_scale = 2.0f;
  g_line = 0;
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  const std::string m = error_of<KernelError>([&] { (void)reads_a_global(std::move(z)); });
  g_scale = 1.0f;
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_NE(after_location(m).find(
                "kernel 'reads_a_global' traced differently for one specialization: the trace "
                "this specialization was compiled from has '%0 = constant 1"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("where the trace of this launch (TESSERA_CHECK=trace) has '%0 = constant 2"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find(kWhy), std::string::npos) << m;
}

TEST_F(CheckTraceOnEveryLaunch, AGlobalThatDoesNotChangeRunsOnEveryLaunch) {
  for (int i = 0; i < 3; ++i) {
    auto [out] = reads_a_constant_global(zeros<float>({16}, Device::cpu()).partition({8})).sync();
    EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(16, g_scale));
  }
}

// TESSERA_CHECK is read once per specialization, when it is compiled (its first launch), not on
// every launch: a specialization compiled before the switch was set keeps running unchecked, and
// one compiled while it is set stays checked after it is unset.
TESSERA_KERNEL(reads_a_global_unchecked, Out<float> z) {
  z.store(Tile<float>::full(z.shape(), g_scale));
};
TESSERA_KERNEL(reads_a_global_checked, Out<float> z) {
  at(__LINE__, [&] { z.store(Tile<float>::full(z.shape(), g_scale)); });
};

TEST(CheckTraceSwitch, IsReadWhenASpecializationIsCompiledNotOnEachLaunch) {
  unsetenv("TESSERA_CHECK");
  g_scale = 1.0f;
  (void)reads_a_global_unchecked(zeros<float>({16}, Device::cpu()).partition({8})).sync();
  setenv("TESSERA_CHECK", "trace", 1);
  (void)reads_a_global_checked(zeros<float>({16}, Device::cpu()).partition({8})).sync();
  g_scale = 2.0f;
  // Compiled unchecked: with the switch set now, it still runs the IR of its first trace (the
  // stale value the switch exists to catch) instead of failing.
  auto [stale] = reads_a_global_unchecked(zeros<float>({16}, Device::cpu()).partition({8})).sync();
  EXPECT_EQ(std::move(stale).unpartition().to_vector(), std::vector<float>(16, 1.0f));
  unsetenv("TESSERA_CHECK");
  // Compiled checked: still re-traced although the switch is unset now.
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  const std::string m = error_of<KernelError>([&] { (void)reads_a_global_checked(std::move(z)); });
  g_scale = 1.0f;
  EXPECT_NE(m.find("kernel 'reads_a_global_checked' traced differently for one specialization"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace tessera::test

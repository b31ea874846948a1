// The specialization cache holds no global lock while it traces and compiles: a launch whose
// specialization is being built (a cold NVRTC compile can take seconds) stalls only the launches
// that need that specialization, not the launches of other kernels on other threads.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

// The test holds the first trace of slow_to_trace until it lets it go. (Both traces of a cold
// specialization see the same IR: the wait changes nothing traced.)
std::atomic<bool> g_tracing{false};
std::atomic<bool> g_release{false};

TESSERA_KERNEL(slow_to_trace, Out<float> z, In<float> x) {
  g_tracing = true;
  while (!g_release) std::this_thread::yield();
  z.store(load_like(x, z));
};
TESSERA_KERNEL(quick_to_trace, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};

TEST(SpecializationCacheLock, AColdBuildDoesNotStallAnotherKernelsLaunchOnAnotherThread) {
  auto x = ones<float>({64}, Device::cpu());
  std::thread slow([&] {
    auto [z, in] = slow_to_trace(zeros<float>({64}, Device::cpu()).partition({16}), x).sync();
    EXPECT_EQ(std::move(z).unpartition().to_vector(), std::vector<float>(64, 1.0f));
  });
  while (!g_tracing) std::this_thread::yield();
  // slow_to_trace is being traced now; a launch of another kernel (cold, so it traces and
  // compiles too) runs to completion meanwhile.
  auto quick = std::async(std::launch::async, [&] {
    auto [z, in] = quick_to_trace(zeros<float>({64}, Device::cpu()).partition({16}), x).sync();
    return std::move(z).unpartition().to_vector();
  });
  const bool in_time = quick.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  g_release = true;  // lets the slow trace finish whatever happened
  slow.join();
  ASSERT_TRUE(in_time) << "a launch of another kernel waited for slow_to_trace's build";
  EXPECT_EQ(quick.get(), std::vector<float>(64, 2.0f));
}

}  // namespace
}  // namespace tessera::test

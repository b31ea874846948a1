// Launches from threads that come and go: each thread keeps a spare list of its own in front of
// the shared ones (block_pool.hpp's SpareVectors), and a thread's spare dies with it. A chain
// issued on a short-lived thread, and launches on the threads after it, must still see whole
// argument lists (under ThreadSanitizer, no race between a thread's front and the shared lists).
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

TESSERA_KERNEL(plus_one, Out<float> z, In<float> x) {
  z.store(load_like(x, z) + 1.0f);
};

constexpr int64_t kN = 4096;
constexpr int kSteps = 10;

std::vector<float> values(float add) {
  std::vector<float> v(static_cast<size_t>(kN));
  for (int64_t i = 0; i < kN; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i % 37) + add;
  return v;
}

// kSteps chained launches, each reading the one before's output; the result read on the host.
std::vector<float> chain_of_steps() {
  Tensor<float, 1> cur = from_host(values(0), Device::cpu());
  for (int i = 0; i < kSteps; ++i) {
    auto [next, in] = plus_one(zeros<float>({kN}, Device::cpu()).partition({256}), cur).chain();
    cur = std::move(next).unpartition();
  }
  return cur.to_vector();
}

TEST(LaunchThreads, ChainsOnThreadsThatEndAndOnTheThreadsAfterThemSeeWholeArguments) {
  for (int round = 0; round < 3; ++round) {
    std::vector<std::vector<float>> results(4);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < results.size(); ++t)
      threads.emplace_back([&results, t] { results[t] = chain_of_steps(); });
    for (std::thread& t : threads) t.join();
    for (const std::vector<float>& r : results) EXPECT_EQ(r, values(kSteps));
    EXPECT_EQ(chain_of_steps(), values(kSteps));  // this thread, after them
  }
}

}  // namespace
}  // namespace tessera::test

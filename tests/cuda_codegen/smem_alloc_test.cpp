// The shared-memory allocator of the general CUDA lowering (smem_alloc.hpp): buffers live at the
// same time never overlap, dead ones are reused, offsets are aligned, and the block's limit is a
// KernelError naming the kernel and the bytes asked for.
#include "tessera/backend/cuda/smem_alloc.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "corpus.hpp"
#include "tessera/backend/cuda/codegen.hpp"

namespace tessera::backend::cuda {
namespace {

const SourceLoc kHere{"user.cpp", 12, 3};

bool overlap(const SmemBuffer& a, const SmemBuffer& b) {
  return a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
}

TEST(SmemAllocator, BuffersLiveTogetherDoNotOverlap) {
  SmemAllocator s("k", "sm_80", 1 << 20);
  s.at(1);
  const int64_t a = s.allocate("a", 1000, kHere);
  const int64_t b = s.allocate("b", 24, kHere);
  const int64_t c = s.allocate("c", 512, kHere);
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1008);  // after a, 16-byte aligned
  EXPECT_EQ(c, 1040);
  const auto& all = s.buffers();
  ASSERT_EQ(all.size(), 3u);
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) EXPECT_FALSE(overlap(all[i], all[j])) << i << j;
  EXPECT_EQ(s.high_water(), 1552);
}

TEST(SmemAllocator, DeadBuffersAreReused) {
  SmemAllocator s("k", "sm_80", 1 << 20);
  s.at(1);
  EXPECT_EQ(s.allocate("op 1", 4096, kHere), 0);
  s.at(2);  // op 1's buffer is dead: op 2 takes its bytes
  EXPECT_EQ(s.allocate("op 2", 2048, kHere), 0);
  EXPECT_EQ(s.allocate("op 2, second", 2048, kHere), 2048);
  s.at(3);
  EXPECT_EQ(s.allocate("op 3", 8192, kHere), 0);
  EXPECT_EQ(s.high_water(), 8192);  // the largest op, not the sum
}

TEST(SmemAllocator, ABufferLiveOverSeveralOpsKeepsItsBytesUntilItsLastOp) {
  SmemAllocator s("k", "sm_80", 1 << 20);
  s.at(1);
  EXPECT_EQ(s.allocate("carried", 256, /*last=*/3, kHere), 0);
  EXPECT_EQ(s.allocate("op 1 only", 256, kHere), 256);
  s.at(2);
  // op 1's buffer is dead, the carried one is not: the gap after it is taken first.
  EXPECT_EQ(s.allocate("op 2", 128, kHere), 256);
  EXPECT_EQ(s.allocate("op 2, large", 512, kHere), 384);
  s.at(4);  // the carried buffer died after op 3
  EXPECT_EQ(s.allocate("op 4", 256, kHere), 0);
}

TEST(SmemAllocator, AReleasedBufferIsReusedWithinTheSameOp) {
  SmemAllocator s("k", "sm_80", 1 << 20);
  s.at(1);
  EXPECT_EQ(s.allocate("kept", 64, kHere), 0);
  const int64_t conversion = s.allocate("a conversion", 3072, kHere);
  EXPECT_EQ(conversion, 64);
  s.release(conversion);  // its value is back in registers
  EXPECT_EQ(s.allocate("the op's own staging", 1024, kHere), 64);
  EXPECT_EQ(s.high_water(), 64 + 3072);
  EXPECT_EQ(s.buffers()[1].last, 1);
  EXPECT_TRUE(s.buffers()[1].released);
  EXPECT_FALSE(s.buffers()[0].released);
  EXPECT_THROW(s.release(conversion + 16), InternalError);  // nothing lives there
}

TEST(SmemAllocator, FirstFitFillsAGapBetweenLiveBuffers) {
  SmemAllocator s("k", "sm_80", 1 << 20);
  s.at(1);
  EXPECT_EQ(s.allocate("low", 64, 5, kHere), 0);
  EXPECT_EQ(s.allocate("middle", 64, 1, kHere), 64);
  EXPECT_EQ(s.allocate("high", 64, 5, kHere), 128);
  s.at(2);
  EXPECT_EQ(s.allocate("too large for the gap", 80, kHere), 192);
  EXPECT_EQ(s.allocate("fits the gap", 64, kHere), 64);
}

TEST(SmemAllocator, OffsetsAreAlignedAsAsked) {
  SmemAllocator s("k", "sm_80", 1 << 20);
  s.at(1);
  EXPECT_EQ(s.allocate("one byte", 1, kHere, 1), 0);
  EXPECT_EQ(s.allocate("another", 3, kHere, 1), 1);
  EXPECT_EQ(s.allocate("four-aligned", 4, kHere, 4), 4);
  EXPECT_EQ(s.allocate("128-aligned", 4, kHere, 128), 128);
  for (const SmemBuffer& b : s.buffers()) EXPECT_EQ(b.offset % 1, 0);
  EXPECT_THROW(s.allocate("bad alignment", 4, kHere, 3), InternalError);
}

TEST(SmemAllocator, PassingTheLimitIsAKernelErrorNamingTheKernelAndTheBytes) {
  SmemAllocator s("softmax_rows", "sm_80", 166912);
  s.at(1);
  s.allocate("operand a of an mma, staged", 100000, kHere);
  try {
    s.allocate("operand b of an mma, staged", 70000, kHere);
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("user.cpp:12:3", 0), 0u) << m;  // at the user's line
    EXPECT_NE(m.find("kernel 'softmax_rows': operand b of an mma, staged needs 70000 bytes of "
                     "shared memory per block at offset 100000, beside operand a of an mma, "
                     "staged (100000): 170000 in all, more than the 166912 bytes sm_80 allows"),
              std::string::npos)
        << m;
  }
  // Alone, a buffer past the limit says so without the "beside" part.
  s.at(2);
  try {
    s.allocate("a reduction", 200000, kHere);
    FAIL() << "expected a KernelError";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find("kernel 'softmax_rows': a reduction needs 200000 bytes "
                                         "of shared memory per block: 200000 in all"),
              std::string::npos)
        << e.what();
  }
  // Exactly at the limit fits.
  EXPECT_EQ(s.allocate("all of it", 166912, kHere), 0);
}

TEST(SmemAllocator, TheClockNeverRunsBackwards) {
  SmemAllocator s("k", "sm_80", 1 << 20);
  s.at(3);
  EXPECT_THROW(s.at(2), InternalError);
  EXPECT_THROW(s.allocate("ended before it began", 8, /*last=*/2, kHere), InternalError);
}

// In emitted code, for every kernel of the corpus: the plan written into the source has no two
// buffers live at the same op sharing a byte, and the kernel asks for the plan's high-water mark.
TEST(SmemAllocatorInTheLowering, PlansOfTheCorpusKeepLiveBuffersApart) {
  int planned = 0;
  for (const test::CorpusKernel& c : test::corpus()) {
    const ir::Function f = test::prepared(c.make());
    for (const Arch arch : {test::kSm80, test::kSm90a}) {
      const EmittedKernel k = emit(f, test::aligned_spec(f, arch));
      const std::string code = test::kernel_part(k.source);
      std::istringstream lines(code);
      std::vector<SmemBuffer> plan;
      int64_t total = -1;
      for (std::string l; std::getline(lines, l);) {
        long long from = 0, to = 0, first = 0, last = 0, bytes = 0;
        if (std::sscanf(l.c_str(), " // shared memory: %lld bytes", &bytes) == 1) total = bytes;
        if (std::sscanf(l.c_str(), " //   [%lld, %lld) ops [%lld, %lld]", &from, &to, &first,
                        &last) == 4)
          plan.push_back(
              {"", from, to - from, first, last, l.find("] released: ") != std::string::npos});
      }
      if (total < 0) {
        EXPECT_TRUE(plan.empty()) << c.name;
        continue;
      }
      // Only the general lowering writes the plan; its kernel asks for the high-water mark.
      EXPECT_EQ(static_cast<int64_t>(k.shared_bytes), total) << c.name << " " << arch.str();
      ++planned;
      int64_t high = 0;
      for (size_t i = 0; i < plan.size(); ++i) {
        high = std::max(high, plan[i].offset + plan[i].bytes);
        EXPECT_EQ(plan[i].offset % 16, 0) << c.name;
        for (size_t j = i + 1; j < plan.size(); ++j) {
          // A released buffer ended before the later buffers of its op were given out.
          const bool together =
              plan[i].first <= plan[j].last && plan[j].first <= plan[i].last && !plan[i].released;
          EXPECT_FALSE(together && overlap(plan[i], plan[j]))
              << c.name << " " << arch.str() << ": buffers " << i << " and " << j << "\n"
              << code;
        }
      }
      EXPECT_EQ(high, total) << c.name;
    }
  }
  EXPECT_GT(planned, 10);  // the corpus stages values in shared memory in many kernels
}

}  // namespace
}  // namespace tessera::backend::cuda

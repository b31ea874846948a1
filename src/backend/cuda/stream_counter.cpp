#include "tessera/backend/cuda/stream_counter.hpp"

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "tessera/backend/cuda/driver.hpp"

namespace tessera::backend::cuda {

namespace {

// Words a cache line apart (the host reads one while the device writes its neighbour), taken from
// pinned pages that every context maps. Leaked on purpose, like the contexts and the events.
constexpr size_t kWordStride = 64 / sizeof(uint64_t);
constexpr size_t kPageBytes = 4096;

struct WordPool {
  std::mutex mu;
  std::vector<uint64_t*> free;
};
WordPool& pool() {
  static auto* p = new WordPool;
  return *p;
}

// A free word, or null. Under the pool's lock.
uint64_t* take_word(WordPool& p) {
  if (p.free.empty()) {
    void* page = nullptr;
    if (driver().cuMemHostAlloc(&page, kPageBytes,
                                CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) !=
        CUDA_SUCCESS)
      return nullptr;
    auto* words = static_cast<uint64_t*>(page);
    for (size_t i = kPageBytes / sizeof(uint64_t); i >= kWordStride; i -= kWordStride)
      p.free.push_back(words + i - kWordStride);
  }
  uint64_t* w = p.free.back();
  p.free.pop_back();
  return w;
}

}  // namespace

std::unique_ptr<StreamCounter> StreamCounter::make(const DeviceContext& ctx) noexcept {
  // TESSERA_AB_STREAM_COUNTER=0: events only (an A/B switch for bench/launch).
  if (const char* e = std::getenv("TESSERA_AB_STREAM_COUNTER"); e && *e == '0') return nullptr;
  try {
    const DriverApi& api = driver();
    int supported = 0;
    if (api.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS,
                                 ctx.device()) != CUDA_SUCCESS ||
        !supported)
      return nullptr;
    ctx.make_current();
    WordPool& p = pool();
    std::lock_guard lock(p.mu);
    uint64_t* word = take_word(p);
    if (!word) return nullptr;
    CUdeviceptr device_word = 0;
    if (api.cuMemHostGetDevicePointer(&device_word, word, 0) != CUDA_SUCCESS) {
      p.free.push_back(word);
      return nullptr;
    }
    __atomic_store_n(word, 0, __ATOMIC_RELEASE);  // nothing queued writes it: its last one landed
    std::unique_ptr<StreamCounter> counter(new (std::nothrow)
                                               StreamCounter(ctx, word, device_word));
    if (!counter) p.free.push_back(word);
    return counter;
  } catch (...) {
    return nullptr;
  }
}

StreamCounter::~StreamCounter() {
  if (read() != last_queued_) return;  // a write may still land: the word stays out of the pool
  WordPool& p = pool();
  try {
    std::lock_guard lock(p.mu);
    p.free.push_back(word_);
  } catch (...) {  // no room: the word is left unused
  }
}

void StreamCounter::write_after(CUstream stream, uint64_t value) {
  ctx_->make_current();
  TESSERA_CU(cuStreamWriteValue64, stream, device_word_, value, CU_STREAM_WRITE_VALUE_DEFAULT);
  last_queued_ = value;
}

}  // namespace tessera::backend::cuda

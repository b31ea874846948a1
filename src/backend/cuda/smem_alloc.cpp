#include "tessera/backend/cuda/smem_alloc.hpp"

#include <algorithm>

namespace tessera::backend::cuda {

SmemAllocator::SmemAllocator(std::string kernel, std::string arch, int64_t limit)
    : kernel_(std::move(kernel)), arch_(std::move(arch)), limit_(limit) {}

void SmemAllocator::at(int64_t pos) {
  if (pos < pos_)
    fail<InternalError>(
        "internal error (a bug in Tessera): the shared-memory allocator of kernel '", kernel_,
        "' moved back from op ", pos_, " to ", pos);
  pos_ = pos;
  std::erase_if(live_, [&](size_t i) { return all_[i].last < pos_; });
}

int64_t SmemAllocator::allocate(const std::string& what, int64_t bytes, int64_t last,
                                const SourceLoc& loc, int64_t align) {
  if (bytes < 0 || align <= 0 || (align & (align - 1)) != 0 || last < pos_)
    fail<InternalError>("internal error (a bug in Tessera): shared-memory request '", what,
                        "' of kernel '", kernel_, "': ", bytes, " bytes, alignment ", align,
                        ", live to op ", last, " from op ", pos_);
  const auto up = [&](int64_t x) { return (x + align - 1) / align * align; };
  // First fit: the gaps between live buffers, lowest offset first.
  int64_t offset = 0;
  for (size_t i : live_) {
    const SmemBuffer& b = all_[i];
    if (up(offset) + bytes <= b.offset) break;
    offset = std::max(offset, b.offset + b.bytes);
  }
  offset = up(offset);
  if (offset + bytes > limit_) {
    std::string beside;
    for (size_t i : live_)
      beside += ::tessera::detail::cat(beside.empty() ? "" : ", ", all_[i].what, " (",
                                       all_[i].bytes, ")");
    fail_at<KernelError>(loc, "kernel '", kernel_, "': ", what, " needs ", bytes,
                         " bytes of shared memory per block",
                         beside.empty()
                             ? std::string()
                             : ::tessera::detail::cat(" at offset ", offset, ", beside ", beside),
                         ": ", offset + bytes, " in all, more than the ", limit_, " bytes ", arch_,
                         " allows; use smaller tiles");
  }
  all_.push_back({what, offset, bytes, pos_, last});
  const size_t index = all_.size() - 1;
  live_.insert(std::upper_bound(live_.begin(), live_.end(), offset,
                                [&](int64_t o, size_t i) { return o < all_[i].offset; }),
               index);
  high_water_ = std::max(high_water_, offset + bytes);
  return offset;
}

void SmemAllocator::release(int64_t offset) {
  // The latest buffer there (an empty one may share its offset with another).
  auto it = live_.end();
  for (auto i = live_.begin(); i != live_.end(); ++i)
    if (all_[*i].offset == offset && (it == live_.end() || *i > *it)) it = i;
  if (it == live_.end())
    fail<InternalError>("internal error (a bug in Tessera): kernel '", kernel_,
                        "' releases shared memory at offset ", offset, ", where no buffer lives");
  all_[*it].last = pos_;
  all_[*it].released = true;
  live_.erase(it);
}

std::vector<std::string> SmemAllocator::plan() const {
  std::vector<std::string> lines;
  if (all_.empty()) return lines;
  lines.push_back(
      ::tessera::detail::cat("shared memory: ", high_water_, " bytes, ", all_.size(),
                             " buffers (SmemAllocator; bytes [from, to) live over ops [first, "
                             "last])"));
  for (const SmemBuffer& b : all_)
    lines.push_back(::tessera::detail::cat("  [", b.offset, ", ", b.offset + b.bytes, ") ops [",
                                           b.first, ", ", b.last,
                                           b.released ? "] released: " : "]: ", b.what));
  return lines;
}

}  // namespace tessera::backend::cuda

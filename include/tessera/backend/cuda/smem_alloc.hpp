// Shared memory of one kernel in the general (non-pipelined) CUDA lowering, given out buffer by
// buffer by an allocator that knows which buffers are live at the same time.
//
// A buffer lives over an interval of the emitter's op order (positions first..last, inclusive;
// an op that stages a value and reads it back before it ends has first == last). While the
// emitter walks the ops it moves the allocator forward (at); a buffer whose last position is
// behind is dead and its bytes are free again, so a later buffer may take them. A new buffer
// takes the lowest aligned offset where it overlaps no live buffer (first fit), so buffers live
// together never share a byte, and the kernel's dynamic shared memory is the high-water mark.
//
// Reuse across ops is safe only with the barriers the emitter already puts around each staging
// (one before a buffer is written: earlier readers of those bytes are done; one after: every
// element is written before any is read).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/error.hpp"

namespace tessera::backend::cuda {

struct SmemBuffer {
  std::string what;  // what it holds, for errors and the plan ("operand a of an mma")
  int64_t offset = 0, bytes = 0;
  int64_t first = 0, last = 0;  // live over op positions [first, last]
  bool released = false;        // ended inside op `last` (release), before the op's later buffers
};

class SmemAllocator {
 public:
  // `kernel` and `arch` name the kernel and its target in errors; `limit` is the dynamic shared
  // memory a block may use there.
  SmemAllocator(std::string kernel, std::string arch, int64_t limit);

  // Moves to op position `pos` (never backwards): buffers whose last position is before it die.
  void at(int64_t pos);
  int64_t position() const { return pos_; }

  // A buffer of `bytes`, aligned to `align` (a power of two), live from the current position to
  // `last` (>= it). Returns its offset. A buffer that would end past the limit is a KernelError
  // at `loc` naming the kernel, what the buffer holds, the bytes asked for and the buffers live
  // beside it.
  int64_t allocate(const std::string& what, int64_t bytes, int64_t last, const SourceLoc& loc,
                   int64_t align = 16);
  // The same, live at the current position only.
  int64_t allocate(const std::string& what, int64_t bytes, const SourceLoc& loc,
                   int64_t align = 16) {
    return allocate(what, bytes, pos_, loc, align);
  }

  // Ends the buffer at `offset` now, before its last position (a staging whose values are back
  // in registers): a later buffer may take its bytes, after the barrier that starts its staging.
  void release(int64_t offset);

  // Bytes the kernel needs: the furthest end of any buffer.
  int64_t high_water() const { return high_water_; }
  // Every buffer given out, in order: the kernel's shared-memory plan.
  const std::vector<SmemBuffer>& buffers() const { return all_; }
  // The plan as comment lines for the emitted source (empty when no buffer was asked for).
  std::vector<std::string> plan() const;

 private:
  std::string kernel_, arch_;
  int64_t limit_;
  int64_t pos_ = 0;
  int64_t high_water_ = 0;
  std::vector<size_t> live_;  // indices into all_, by offset
  std::vector<SmemBuffer> all_;
};

}  // namespace tessera::backend::cuda

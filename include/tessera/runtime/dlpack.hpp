// DLPack interop: tensors lent to Tessera by another library (PyTorch, NumPy, CuPy, JAX, ...) and
// Tessera tensors lent to one, without copies, in DLPack's C ABI (DLManagedTensor, from
// <dlpack/dlpack.h>; Debian and Ubuntu package it as libdlpack-dev, which scripts/deps.sh
// installs).
//
// Ownership, in both directions, follows the handle rules of tensor_handle.hpp:
// - from_dlpack<T>(managed) takes the producer's DLManagedTensor. The tensor it returns is one
//   handle to the borrowed memory; copies, views and pending launches are more handles, and the
//   producer's deleter runs once, when the last of them is gone (never before a launch that uses
//   the memory is done). Partitioning it as an output needs the only handle on Tessera's side, as
//   for any tensor; Tessera cannot count the producer's own references, so while Tessera holds the
//   memory the producer must not write it, nor read it while a launch writes it (sync the launch
//   first): with PyTorch, leave the torch tensor alone until the Tessera call returns.
// - to_dlpack(t) exports a view of t: the DLManagedTensor holds one more handle to t's storage
//   until the consumer calls its deleter, so while it lives partition() of t is refused (the
//   consumer may write through it). The consumer must not write the memory while a Tessera launch
//   reading it is pending, nor use the pointer after calling the deleter (DLPack's own rule).
//   Handed back to from_dlpack, Tessera's own export is the same storage again (its handles are
//   counted with the source's), not a borrowed copy.
//
// Streams: Tessera queues a GPU's work on its own stream. from_dlpack does not wait for the
// producer: its writes must be finished (or ordered before Tessera's work) when a launch reads
// the tensor; with PyTorch, synchronize its current stream first. to_dlpack waits for the work
// already queued on the tensor's GPU, so the consumer may use the memory on any stream. To stay
// in another library's stream order with no host waits, launch on its stream (adopt_unchecked)
// and pass that stream to from_dlpack and to_dlpack (the overloads below).
//
// Supported: CPU memory (kDLCPU) and CUDA device memory (kDLCUDA), elements of one lane of a
// Tessera dtype (bool, i8-i64, u8, f16, bf16, f32, f64, f8e4m3 as kDLFloat8_e4m3fn, f8e5m2),
// strides that never map two indices to one element (a broadcast view with a zero stride is
// refused: an output there would race).
#pragma once

#include <source_location>

#include "tessera/runtime/stream.hpp"
#include "tessera/runtime/tensor.hpp"

// Set by the build (CMakeLists.txt) to 1 when Tessera was built with DLPack's header.
#ifndef TESSERA_HAS_DLPACK
#define TESSERA_HAS_DLPACK 0
#endif

// DLPack's managed tensor (<dlpack/dlpack.h>); only a pointer to it crosses this header, so a user
// who never touches DLPack needs no DLPack header.
struct DLManagedTensor;  // NOLINT(readability-identifier-naming): DLPack's own name

namespace tessera {

namespace runtime {

#if TESSERA_HAS_DLPACK
// The untyped core of from_dlpack/to_dlpack (src/runtime/dlpack.cpp).
// Checks `managed` against the element type and rank asked for (rank: kDynamicRank for any) and
// returns a handle over its memory that owns it (see above). Throws UsageError, at loc, naming
// what does not fit and what to do; `managed` is then untouched and still the caller's.
// `stream` (optional): the producer reuses the memory in that stream's order (see from_dlpack).
TensorHandle handle_from_dlpack(DLManagedTensor* managed, DType dtype, int rank, SourceLoc loc,
                                const Stream* stream = nullptr);
// A new DLManagedTensor viewing h's elements, holding a copy of h. Throws OwnershipError for a
// moved-from handle.
// `stream` (optional): the consumer's stream, ordered on the device instead of a host wait.
DLManagedTensor* handle_to_dlpack(const TensorHandle& h, SourceLoc loc,
                                  const Stream* stream = nullptr);
#endif

// Builds tensors over handles from handle_from_dlpack (a friend of Tensor).
struct DLPackTensors {
  template <class X>
  static X adopt(TensorHandle h) {
    return X(std::move(h));
  }
};

template <class T>
inline constexpr bool built_with_dlpack = TESSERA_HAS_DLPACK != 0;

}  // namespace runtime

// The tensor lent by `managed` (from a producer's __dlpack__() or to_dlpack), as a Tensor<T, R>
// on the device it lives on; Tessera now owns `managed` and calls its deleter when done with it.
// Throws UsageError when its element type is not T, its rank not R, its device, lanes or strides
// are not supported, or it is null: then the caller still owns `managed`.
template <Element T, int R = kDynamicRank>
Tensor<T, R> from_dlpack(DLManagedTensor* managed,
                         std::source_location l = std::source_location::current()) {
  static_assert(runtime::built_with_dlpack<T>,
                "from_dlpack(): this Tessera was built without DLPack support, because "
                "<dlpack/dlpack.h> was not found; install libdlpack-dev (or pass "
                "-DTESSERA_DLPACK_INCLUDE_DIR=<folder holding dlpack/dlpack.h>) and rebuild "
                "Tessera");
#if TESSERA_HAS_DLPACK
  return runtime::DLPackTensors::adopt<Tensor<T, R>>(
      runtime::handle_from_dlpack(managed, dtype_v<T>, R, l));
#else
  (void)managed;
  (void)l;
  return {};
#endif
}

// from_dlpack for a producer that reuses the memory in the order of GPU stream `stream` (PyTorch's
// caching allocator does, for a tensor used on the stream it was made on: pass
// Stream::adopt_unchecked(gpu, torch.cuda.current_stream().cuda_stream)). When Tessera's last
// handle goes, the producer's deleter runs at once, and `stream` waits on the device for the
// launches still using the memory: the host does not wait for them. Unchecked: if the producer
// hands the memory to work on another stream meanwhile, that work is not ordered after Tessera's
// launches. On the CPU the stream is only a name, and the host waits as above.
template <Element T, int R = kDynamicRank>
Tensor<T, R> from_dlpack_unchecked(DLManagedTensor* managed, const Stream& stream,
                                   std::source_location l = std::source_location::current()) {
  static_assert(runtime::built_with_dlpack<T>,
                "from_dlpack(): this Tessera was built without DLPack support, because "
                "<dlpack/dlpack.h> was not found; install libdlpack-dev (or pass "
                "-DTESSERA_DLPACK_INCLUDE_DIR=<folder holding dlpack/dlpack.h>) and rebuild "
                "Tessera");
#if TESSERA_HAS_DLPACK
  return runtime::DLPackTensors::adopt<Tensor<T, R>>(
      runtime::handle_from_dlpack(managed, dtype_v<T>, R, l, &stream));
#else
  (void)managed;
  (void)stream;
  (void)l;
  return {};
#endif
}

// A DLManagedTensor viewing t (shape, strides and offset as t's), that keeps t's storage alive
// until its deleter is called; hand it to the consumer (torch.from_dlpack, np.from_dlpack, ...),
// which calls the deleter when it is done. Throws OwnershipError for a moved-from tensor.
template <Element T, int R>
DLManagedTensor* to_dlpack(const Tensor<T, R>& t,
                           std::source_location l = std::source_location::current()) {
  static_assert(runtime::built_with_dlpack<T>,
                "to_dlpack(): this Tessera was built without DLPack support, because "
                "<dlpack/dlpack.h> was not found; install libdlpack-dev (or pass "
                "-DTESSERA_DLPACK_INCLUDE_DIR=<folder holding dlpack/dlpack.h>) and rebuild "
                "Tessera");
#if TESSERA_HAS_DLPACK
  return runtime::handle_to_dlpack(runtime::HandleAccess::of(t), l);
#else
  (void)t;
  (void)l;
  return nullptr;
#endif
}

// The same for a consumer that uses the memory on GPU stream `stream` (the stream a DLPack
// consumer passes to __dlpack__): instead of the host waiting for the work queued on t's GPU,
// `stream` waits for it on the device. On the CPU it is to_dlpack(t).
template <Element T, int R>
DLManagedTensor* to_dlpack(const Tensor<T, R>& t, const Stream& stream,
                           std::source_location l = std::source_location::current()) {
  static_assert(runtime::built_with_dlpack<T>,
                "to_dlpack(): this Tessera was built without DLPack support, because "
                "<dlpack/dlpack.h> was not found; install libdlpack-dev (or pass "
                "-DTESSERA_DLPACK_INCLUDE_DIR=<folder holding dlpack/dlpack.h>) and rebuild "
                "Tessera");
#if TESSERA_HAS_DLPACK
  return runtime::handle_to_dlpack(runtime::HandleAccess::of(t), l, &stream);
#else
  (void)t;
  (void)stream;
  (void)l;
  return nullptr;
#endif
}

}  // namespace tessera

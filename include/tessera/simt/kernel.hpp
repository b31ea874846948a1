// Declaring and defining SIMT kernels.
//
// A checked kernel is declared once, in a header that both the host code and the .cu file include:
//
//   TESSERA_SIMT_KERNEL(vecadd, Index1D i, DisjointSpan<float> out, Span<const float> x,
//                       Span<const float> y) {
//     return contract<1>().block_at_most(1024).require(size<"x"> == size<"out">);
//   };
//
// The braces hold the kernel's launch contract (contract.hpp); the parameter list is the body's.
// The first parameter is the thread-index witness, the others are spans and arithmetic scalars,
// all by value; anything else (a raw pointer above all) is a compile error that says what to use.
//
// The body is defined in the .cu file (compiled by nvcc), or in a source string handed to NVRTC:
//
//   TESSERA_SIMT_DEFINE(vecadd, Index1D i, DisjointSpan<float> out, Span<const float> x,
//                       Span<const float> y) {
//     if (auto o = out.at(i)) *o = x[i] + y[i];
//   }
//
// TESSERA_SIMT_DEFINE writes the extern "C" entry `tessera_simt_<name>`: it takes every argument
// but the witness in one struct (ArgPack, laid out the same by the host compiler and the device
// compiler), mints the witness token and calls the body (the token holds nothing: each use derives
// the thread's element from the hardware registers); under a launch shape that would repeat an
// element, no thread owns one and the kernel stops after the body. It also exports the kernel's
// signature record (signature.hpp), which the module checks against the host's declaration.
// Compiled by the host compiler (as the compile-fail tests do), it defines the body only, as an
// ordinary function, so the body is type-checked.
//
// A kernel without a contract, whose parameters may include raw pointers, is declared with
// TESSERA_SIMT_KERNEL_UNCHECKED; it launches only through launch_unchecked (launch.hpp).
#pragma once

#include "tessera/simt/config.hpp"
#include "tessera/simt/index.hpp"
#include "tessera/simt/signature.hpp"
#include "tessera/simt/span.hpp"

#if !defined(__CUDACC_RTC__)
#include "tessera/simt/contract.hpp"
#endif

namespace tessera::simt {
namespace detail {

// One parameter (after the witness) of a checked kernel: a span or an arithmetic scalar, by value.
template <class P>
constexpr bool check_checked_param() {
  using T = remove_cvref<P>;
  if constexpr (is_witness<T>) {
    static_assert(always_false<P>,
                  "a checked kernel takes exactly one thread-index witness, as its first "
                  "parameter.");
  } else if constexpr (is_pointer<T> && !is_const<typename PointeeOf<T>::type>) {
    static_assert(always_false<P>,
                  "a checked kernel cannot take a mutable raw pointer: threads could write any "
                  "element through it. Make the output a DisjointSpan<T> (each thread writes its "
                  "own element through its witness), or declare the kernel with "
                  "TESSERA_SIMT_KERNEL_UNCHECKED and launch it with launch_unchecked.");
  } else if constexpr (is_pointer<T>) {
    static_assert(always_false<P>,
                  "a checked kernel takes its inputs as Span<const T> (reads are bounds-checked), "
                  "not as raw pointers; or declare it with TESSERA_SIMT_KERNEL_UNCHECKED.");
  } else if constexpr (is_mutable_input_span<T>) {
    static_assert(always_false<P>,
                  "an input span is read-only and is written Span<const T> (or Span2D<const T>); "
                  "an output is a DisjointSpan<T>.");
  } else if constexpr (is_reference<P>) {
    static_assert(always_false<P>,
                  "a kernel parameter other than the witness is passed by value (spans are a "
                  "pointer and extents): remove the reference.");
  } else if constexpr (!is_input_span<T> && !is_output_span<T> && !is_element<T>) {
    static_assert(always_false<P>,
                  "a checked kernel's parameters after the witness are DisjointSpan<T>, "
                  "DisjointSpan2D<T>, Span<const T>, Span2D<const T> or arithmetic scalars.");
  }
  return true;
}

template <class W>
constexpr bool check_witness_param() {
  using T = remove_cvref<W>;
  if constexpr (!is_witness<T>) {
    static_assert(always_false<W>,
                  "the first parameter of a checked kernel is its thread-index witness: Index1D, "
                  "Index2D, WarpIndex1D or TileIndex2D<BM, BN, TM, TN>.");
  } else if constexpr (is_reference<W> && !is_const<RemoveRef<W>>) {
    static_assert(always_false<W>,
                  "take the witness by value or by const reference: the entry hands the body a "
                  "fresh one.");
  }
  return true;
}

template <class F>
struct BodySignature {
  static constexpr bool checked() {
    static_assert(always_false<F>, "a checked kernel takes at least its thread-index witness.");
    return true;
  }
};
template <class W, class... P>
struct BodySignature<void(W, P...)> {
  static constexpr bool checked() {
    return check_witness_param<W>() && (check_checked_param<P>() && ... && true);
  }
};

// One parameter of an unchecked kernel: a span, an arithmetic scalar or a raw pointer to one, by
// value (the witness, when the kernel takes one, is still minted by the entry).
template <class P>
constexpr bool check_unchecked_param() {
  using T = remove_cvref<P>;
  if constexpr (is_pointer<T>) {
    static_assert(is_element<remove_cvref<typename PointeeOf<T>::type>>,
                  "a raw pointer parameter points to an arithmetic type.");
  } else if constexpr (is_reference<P> && !is_witness<T>) {
    static_assert(always_false<P>,
                  "a kernel parameter other than the witness is passed by value: remove the "
                  "reference.");
  } else if constexpr (is_mutable_input_span<T>) {
    static_assert(always_false<P>,
                  "an input span is read-only and is written Span<const T> (or Span2D<const T>).");
  } else {
    static_assert(is_witness<T> || is_input_span<T> || is_output_span<T> || is_element<T>,
                  "a kernel's parameters are a witness, spans, arithmetic scalars or raw "
                  "pointers to arithmetic types.");
  }
  return true;
}

template <class F>
struct UncheckedSignature;
template <class... P>
struct UncheckedSignature<void(P...)> {
  static constexpr bool checked() { return (check_unchecked_param<P>() && ... && true); }
};

// The __launch_bounds__ of the entry: the most threads per block the kernel's contract allows, so
// that the compiler budgets registers for the blocks it will really get.
template <class K>
constexpr int launch_bound() {
  if constexpr (requires { K::kLaunchBound; }) {
    return K::kLaunchBound;
  } else if constexpr (requires { K::launch_contract(); }) {
    return static_cast<int>(K::launch_contract().max_block_threads());
  } else {
    return 1024;
  }
}

#if defined(__CUDACC__)
template <class K, class Pack>
__device__ TESSERA_SIMT_INLINE void Entry::run(const Pack& pack) {
  call<K>(pack, MakeIndexSeq<KernelSignature<K>::Params::kSize>{});
}

template <class K, class Pack, unsigned... I>
__device__ TESSERA_SIMT_INLINE void Entry::call(const Pack& pack, IndexSeq<I...>) {
  using Traits = KernelSignature<K>;
  if constexpr (Traits::kHasWitness) {
    using W = typename Traits::Witness;
    // The body's witness is a token: each access derives the thread's element from the registers
    // and owns nothing under a launch shape that would repeat one. Such a launch stops after the
    // body: loudly, and without a write.
    K::body(mint<W>(), PackGet<I>::get(pack)...);
    if (!fits<W>(HardwareIds::current())) trap();
  } else {
    K::body(PackGet<I>::get(pack)...);
  }
}
#endif

// Base of every kernel declaration: brings the contract vocabulary (contract<R>(), size<"x">, ...)
// into the scope of the contract's body without a using-directive.
#if defined(__CUDACC_RTC__)
struct KernelBase {};
#else
struct KernelBase : ContractVocabulary {};
#endif

}  // namespace detail
}  // namespace tessera::simt

#define TESSERA_SIMT_KERNEL(name, ...)                                                \
  struct name : ::tessera::simt::detail::KernelBase {                                 \
    static constexpr const char* kName = #name;                                       \
    static constexpr const char* kParams = #__VA_ARGS__;                              \
    static TESSERA_SIMT_DEVICE void body(__VA_ARGS__);                                \
    static_assert(::tessera::simt::detail::BodySignature<decltype(body)>::checked()); \
    static constexpr auto launch_contract();                                          \
  };                                                                                  \
  constexpr auto name::launch_contract()

#define TESSERA_SIMT_KERNEL_UNCHECKED(name, ...)                                           \
  struct name : ::tessera::simt::detail::KernelBase {                                      \
    static constexpr const char* kName = #name;                                            \
    static constexpr const char* kParams = #__VA_ARGS__;                                   \
    static TESSERA_SIMT_DEVICE void body(__VA_ARGS__);                                     \
    static_assert(::tessera::simt::detail::UncheckedSignature<decltype(body)>::checked()); \
  }

// Under nvcc and NVRTC, TESSERA_SIMT_DEFINE writes the entry and exports the kernel's signature
// record (signature.hpp), which the module checks against the host's declaration at load.
#if defined(__CUDACC__)
#define TESSERA_SIMT_DEFINE(name, ...)                                                        \
  extern "C" __constant__ const ::tessera::simt::detail::SignatureRecord                      \
      tessera_simt_signature_##name = ::tessera::simt::detail::signature_of<name>();          \
  extern "C" __global__ void __launch_bounds__(::tessera::simt::detail::launch_bound<name>()) \
      tessera_simt_##name(const ::tessera::simt::detail::PackOf<name> pack) {                 \
    ::tessera::simt::detail::Entry::run<name>(pack);                                          \
  }                                                                                           \
  __device__ void name::body(__VA_ARGS__)
#else
#define TESSERA_SIMT_DEFINE(name, ...) void name::body(__VA_ARGS__)
#endif

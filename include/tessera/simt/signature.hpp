// What the launcher, the contract and the entry need to know about a kernel's parameters, read
// from the type of its body. Device-safe (no standard library): NVRTC compiles it too.
#pragma once

#include "tessera/simt/config.hpp"
#include "tessera/simt/index.hpp"
#include "tessera/simt/span.hpp"

namespace tessera::simt::detail {

template <class T>
inline constexpr bool is_input_span = false;
template <class T>
inline constexpr bool is_input_span<Span<const T>> = true;
template <class T>
inline constexpr bool is_input_span<Span2D<const T>> = true;
template <class T>
inline constexpr bool is_output_span = false;
template <class T>
inline constexpr bool is_output_span<DisjointSpan<T>> = true;
template <class T>
inline constexpr bool is_output_span<DisjointSpan2D<T>> = true;
template <class T>
inline constexpr bool is_mutable_input_span = false;
template <class T>
inline constexpr bool is_mutable_input_span<Span<T>> = !is_const<T>;
template <class T>
inline constexpr bool is_mutable_input_span<Span2D<T>> = !is_const<T>;

// 1 for Span and DisjointSpan, 2 for the 2-D forms, 0 for anything else.
template <class T>
inline constexpr int span_rank = 0;
template <class T>
inline constexpr int span_rank<Span<const T>> = 1;
template <class T>
inline constexpr int span_rank<DisjointSpan<T>> = 1;
template <class T>
inline constexpr int span_rank<Span2D<const T>> = 2;
template <class T>
inline constexpr int span_rank<DisjointSpan2D<T>> = 2;

template <class T>
inline constexpr bool is_integer_scalar =
    is_element<T> && !is_same<T, bool> && !is_same<T, float> && !is_same<T, double>;

template <class T>
struct PointeeOf {
  using type = void;
};
template <class T>
struct PointeeOf<T*> {
  using type = T;
};

template <class... T>
struct TypeList {
  static constexpr unsigned kSize = sizeof...(T);
};
template <unsigned I, class L>
struct TypeAtT;
template <class H, class... T>
struct TypeAtT<0, TypeList<H, T...>> {
  using type = H;
};
template <unsigned I, class H, class... T>
struct TypeAtT<I, TypeList<H, T...>> : TypeAtT<I - 1, TypeList<T...>> {};
template <unsigned I, class L>
using TypeAt = typename TypeAtT<I, L>::type;

// Every argument but the witness, in order, in one struct passed by value to the entry. A plain
// nested aggregate, so the host and the device compilers lay it out alike.
template <class... P>
struct ArgPack {};
template <class H, class... T>
struct ArgPack<H, T...> {
  H head;
  ArgPack<T...> tail;
};

template <unsigned I>
struct PackGet {
  template <class H, class... T>
  static TESSERA_SIMT_HD constexpr auto& get(ArgPack<H, T...>& p) {
    return PackGet<I - 1>::get(p.tail);
  }
  template <class H, class... T>
  static TESSERA_SIMT_HD constexpr const auto& get(const ArgPack<H, T...>& p) {
    return PackGet<I - 1>::get(p.tail);
  }
};
template <>
struct PackGet<0> {
  template <class H, class... T>
  static TESSERA_SIMT_HD constexpr H& get(ArgPack<H, T...>& p) {
    return p.head;
  }
  template <class H, class... T>
  static TESSERA_SIMT_HD constexpr const H& get(const ArgPack<H, T...>& p) {
    return p.head;
  }
};

// The body's parameters: Params are the arguments the host passes (all but the witness), in the
// order of the argument pack; Body lists every parameter, witness included, as declared.
template <class F>
struct SignatureTraits;
template <class... P>
struct SignatureTraits<void(P...)> {
  static constexpr bool kHasWitness = false;
  using Witness = void;
  using Params = TypeList<P...>;
  using Body = TypeList<P...>;
  using Pack = ArgPack<P...>;
};
template <class W, class... P>
requires is_witness<remove_cvref<W>>
struct SignatureTraits<void(W, P...)> {
  static constexpr bool kHasWitness = true;
  using Witness = remove_cvref<W>;
  using Params = TypeList<P...>;
  using Body = TypeList<W, P...>;
  using Pack = ArgPack<P...>;
};

template <class K>
using KernelSignature = SignatureTraits<decltype(K::body)>;
template <class K>
using PackOf = typename KernelSignature<K>::Pack;

}  // namespace tessera::simt::detail

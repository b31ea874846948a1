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

// ---- the signature an image carries -----------------------------------------------------------
//
// A kernel compiled ahead of time (a .cu built by nvcc) could have been built against an older
// declaration than the host's: an output that is now an input, a float that is now an int. Its
// entry would still be found by name, and read its argument pack wrongly. So TESSERA_SIMT_DEFINE
// also exports `tessera_simt_signature_<name>`, a record of the body's parameter types as the
// device compiler saw them, and the module compares it with the host's record of the same kernel
// before the first launch (module.cpp): a mismatch is an error naming the kernel and the parameter.

inline constexpr unsigned kSignatureVersion = 1;
inline constexpr unsigned kSignatureMaxParams = 32;

// One parameter: its kind ('W' witness, 'O' output span, 'I' input span, 'S' scalar, 'P' mutable
// pointer, 'C' pointer to const), the span's rank (1, 2; else 0) and the element type (Itanium
// mangling's letter: 'f' float, 'i' int, 'l' long, ...).
struct ParamCode {
  unsigned char kind = 0, rank = 0, type = 0, reserved = 0;
};

struct SignatureRecord {
  unsigned version = kSignatureVersion;
  unsigned count = 0;              // parameters, witness included
  unsigned long long witness = 0;  // witness_kind of the witness (0: none)
  ParamCode params[kSignatureMaxParams] = {};
};

template <class T>
inline constexpr unsigned char type_code = '?';
template <>
inline constexpr unsigned char type_code<bool> = 'b';
template <>
inline constexpr unsigned char type_code<char> = 'c';
template <>
inline constexpr unsigned char type_code<signed char> = 'a';
template <>
inline constexpr unsigned char type_code<short> = 's';
template <>
inline constexpr unsigned char type_code<int> = 'i';
template <>
inline constexpr unsigned char type_code<long> = 'l';
template <>
inline constexpr unsigned char type_code<long long> = 'x';
template <>
inline constexpr unsigned char type_code<unsigned char> = 'h';
template <>
inline constexpr unsigned char type_code<unsigned short> = 't';
template <>
inline constexpr unsigned char type_code<unsigned int> = 'j';
template <>
inline constexpr unsigned char type_code<unsigned long> = 'm';
template <>
inline constexpr unsigned char type_code<unsigned long long> = 'y';
template <>
inline constexpr unsigned char type_code<float> = 'f';
template <>
inline constexpr unsigned char type_code<double> = 'd';

template <class T>
struct RemoveConstT {
  using type = T;
};
template <class T>
struct RemoveConstT<const T> {
  using type = T;
};

template <class P>
constexpr ParamCode param_code() {
  using T = remove_cvref<P>;
  ParamCode c;
  if constexpr (is_witness<T>) {
    c.kind = 'W';
  } else if constexpr (is_output_span<T> || is_input_span<T>) {
    c.kind = is_output_span<T> ? 'O' : 'I';
    c.rank = static_cast<unsigned char>(span_rank<T>);
    c.type = type_code<typename T::element_type>;
  } else if constexpr (is_pointer<T>) {
    using E = typename PointeeOf<T>::type;
    c.kind = is_const<E> ? 'C' : 'P';
    c.type = type_code<typename RemoveConstT<E>::type>;
  } else {
    c.kind = 'S';
    c.type = type_code<T>;
  }
  return c;
}

template <class F>
struct SignatureOf;
template <class... P>
struct SignatureOf<void(P...)> {
  static_assert(sizeof...(P) <= kSignatureMaxParams,
                "a SIMT kernel takes at most 32 parameters (its signature record holds 32)");
  static constexpr SignatureRecord make() {
    SignatureRecord r;
    r.count = sizeof...(P);
    unsigned i = 0;
    ((r.params[i++] = param_code<P>()), ...);
    if constexpr (SignatureTraits<void(P...)>::kHasWitness)
      r.witness = witness_kind<typename SignatureTraits<void(P...)>::Witness>;
    return r;
  }
};

// Kernel K's record, from the type of its body as this compiler sees the declaration.
template <class K>
constexpr SignatureRecord signature_of() {
  return SignatureOf<decltype(K::body)>::make();
}

}  // namespace tessera::simt::detail

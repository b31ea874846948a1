// Kernel declarations for NVRTC, spelled from the host's types. The host knows each kernel's body
// type; NVRTC compiles a separate translation unit. Writing the declaration from the type (not
// from the parameter list as written, which may use the host's aliases) makes the device body's
// parameters meet the host's exactly: a mismatch is an NVRTC error ("no declaration matches"),
// not a launch that reads its arguments wrongly.
#pragma once

#include <string>

#include "tessera/simt/kernel.hpp"

namespace tessera::simt::detail {

template <class T>
struct Spell;

#define TESSERA_SIMT_SPELL(T)                \
  template <>                                \
  struct Spell<T> {                          \
    static std::string text() { return #T; } \
  };
TESSERA_SIMT_SPELL(bool)
TESSERA_SIMT_SPELL(signed char)
TESSERA_SIMT_SPELL(short)
TESSERA_SIMT_SPELL(int)
TESSERA_SIMT_SPELL(long)
TESSERA_SIMT_SPELL(long long)
TESSERA_SIMT_SPELL(unsigned char)
TESSERA_SIMT_SPELL(unsigned short)
TESSERA_SIMT_SPELL(unsigned int)
TESSERA_SIMT_SPELL(unsigned long)
TESSERA_SIMT_SPELL(unsigned long long)
TESSERA_SIMT_SPELL(float)
TESSERA_SIMT_SPELL(double)
TESSERA_SIMT_SPELL(char)
#undef TESSERA_SIMT_SPELL

template <class T>
struct Spell<const T> {
  static std::string text() { return "const " + Spell<T>::text(); }
};
template <class T>
struct Spell<T*> {
  static std::string text() { return Spell<T>::text() + "*"; }
};
template <class T>
struct Spell<T&> {
  static std::string text() { return Spell<T>::text() + "&"; }
};

template <>
struct Spell<Index1D> {
  static std::string text() { return "::tessera::simt::Index1D"; }
};
template <>
struct Spell<Index2D> {
  static std::string text() { return "::tessera::simt::Index2D"; }
};
template <>
struct Spell<WarpIndex1D> {
  static std::string text() { return "::tessera::simt::WarpIndex1D"; }
};
template <int BM, int BN, int TM, int TN>
struct Spell<TileIndex2D<BM, BN, TM, TN>> {
  static std::string text() {
    return "::tessera::simt::TileIndex2D<" + std::to_string(BM) + ", " + std::to_string(BN) + ", " +
           std::to_string(TM) + ", " + std::to_string(TN) + ">";
  }
};

template <template <class> class S>
struct SpanName;
template <>
struct SpanName<Span> {
  static constexpr const char* kText = "::tessera::simt::Span";
};
template <>
struct SpanName<Span2D> {
  static constexpr const char* kText = "::tessera::simt::Span2D";
};
template <>
struct SpanName<DisjointSpan> {
  static constexpr const char* kText = "::tessera::simt::DisjointSpan";
};
template <>
struct SpanName<DisjointSpan2D> {
  static constexpr const char* kText = "::tessera::simt::DisjointSpan2D";
};
template <template <class> class S, class T>
requires requires {
  SpanName<S>::kText;
}
struct Spell<S<T>> {
  static std::string text() {
    return std::string(SpanName<S>::kText) + "<" + Spell<T>::text() + ">";
  }
};

template <class F>
struct SpellParams;
template <class... P>
struct SpellParams<void(P...)> {
  static std::string text() {
    std::string s;
    ((s += (s.empty() ? "" : ", ") + Spell<P>::text()), ...);
    return s;
  }
};

// The declaration NVRTC sees for kernel K: its name, its entry's launch bound and its body.
template <class K>
std::string nvrtc_declaration() {
  return std::string("struct ") + K::kName +
         " : ::tessera::simt::detail::KernelBase {\n"
         "  static constexpr const char* kName = \"" +
         K::kName + "\";\n" +
         "  static constexpr int kLaunchBound = " + std::to_string(launch_bound<K>()) + ";\n" +
         "  static __device__ void body(" + SpellParams<decltype(K::body)>::text() + ");\n};\n";
}

}  // namespace tessera::simt::detail

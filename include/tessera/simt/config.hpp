// Shared by the three compilers that see the SIMT device headers: the host C++ compiler (kernel
// declarations, the host launcher, compile-fail tests), nvcc (kernels compiled ahead of time) and
// NVRTC (kernels compiled at run time). NVRTC has no standard library, so the device-side headers
// (config, index, span, kernel) use none: the few type traits they need are defined here.
#pragma once

#if defined(__CUDACC__)
#define TESSERA_SIMT_DEVICE __device__
#define TESSERA_SIMT_HD __host__ __device__
#define TESSERA_SIMT_INLINE __forceinline__
#else
#define TESSERA_SIMT_DEVICE
#define TESSERA_SIMT_HD
#define TESSERA_SIMT_INLINE inline
#endif

#if defined(__CUDACC_RTC__)
// The fixed-width names kernels use, spelled as the host's (LP64 Linux) <cstdint> spells them, so
// that a parameter declared int64_t is the same type on both sides of the launch.
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
#endif

namespace tessera::simt {

// Sizes and indices are 64-bit everywhere, so that no product of launch extents wraps.
using index_t = long;

namespace detail {

template <class A, class B>
inline constexpr bool is_same = false;
template <class A>
inline constexpr bool is_same<A, A> = true;

template <class T>
struct RemoveCvref {
  using type = T;
};
template <class T>
struct RemoveCvref<const T> : RemoveCvref<T> {};
template <class T>
struct RemoveCvref<volatile T> : RemoveCvref<T> {};
template <class T>
struct RemoveCvref<const volatile T> : RemoveCvref<T> {};
template <class T>
struct RemoveCvref<T&> : RemoveCvref<T> {};
template <class T>
struct RemoveCvref<T&&> : RemoveCvref<T> {};
template <class T>
using remove_cvref = typename RemoveCvref<T>::type;

template <class T>
struct RemoveRefT {
  using type = T;
};
template <class T>
struct RemoveRefT<T&> {
  using type = T;
};
template <class T>
struct RemoveRefT<T&&> {
  using type = T;
};
template <class T>
using RemoveRef = typename RemoveRefT<T>::type;

template <class T>
inline constexpr bool is_const = false;
template <class T>
inline constexpr bool is_const<const T> = true;

template <class T>
inline constexpr bool is_pointer = false;
template <class T>
inline constexpr bool is_pointer<T*> = true;
template <class T>
inline constexpr bool is_pointer<T* const> = true;

template <class T>
inline constexpr bool is_reference = false;
template <class T>
inline constexpr bool is_reference<T&> = true;
template <class T>
inline constexpr bool is_reference<T&&> = true;

// The element types a span may hold and the scalar types a kernel may take by value: the
// arithmetic types, which have one layout on the host and on the device.
template <class T>
inline constexpr bool is_element = false;
#define TESSERA_SIMT_ELEMENT(T) \
  template <>                   \
  inline constexpr bool is_element<T> = true;
TESSERA_SIMT_ELEMENT(bool)
TESSERA_SIMT_ELEMENT(signed char)
TESSERA_SIMT_ELEMENT(short)
TESSERA_SIMT_ELEMENT(int)
TESSERA_SIMT_ELEMENT(long)
TESSERA_SIMT_ELEMENT(long long)
TESSERA_SIMT_ELEMENT(unsigned char)
TESSERA_SIMT_ELEMENT(unsigned short)
TESSERA_SIMT_ELEMENT(unsigned int)
TESSERA_SIMT_ELEMENT(unsigned long)
TESSERA_SIMT_ELEMENT(unsigned long long)
TESSERA_SIMT_ELEMENT(float)
TESSERA_SIMT_ELEMENT(double)
#undef TESSERA_SIMT_ELEMENT

template <class... T>
inline constexpr bool always_false = false;

template <unsigned... I>
struct IndexSeq {};
template <unsigned N, unsigned... I>
struct MakeIndexSeq_ : MakeIndexSeq_<N - 1, N - 1, I...> {};
template <unsigned... I>
struct MakeIndexSeq_<0, I...> {
  using type = IndexSeq<I...>;
};
template <unsigned N>
using MakeIndexSeq = typename MakeIndexSeq_<N>::type;

// 0 <= i < n, in one unsigned comparison (a negative i wraps to a huge one).
TESSERA_SIMT_HD constexpr bool below(index_t i, index_t n) {
  return static_cast<unsigned long>(i) < static_cast<unsigned long>(n);
}

// Stops the kernel: a broken invariant that the host could not rule out (an out-of-bounds read,
// a launch shape that does not match the kernel's index space). On the host, where these types
// are only compiled (never run) except in unit tests, it is a call to a function that aborts.
[[noreturn]] TESSERA_SIMT_HD TESSERA_SIMT_INLINE void trap() {
#if defined(__CUDA_ARCH__)
  __trap();
  __builtin_unreachable();
#else
  __builtin_trap();
#endif
}

}  // namespace detail
}  // namespace tessera::simt

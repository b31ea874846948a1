// Kernels and launches. TESSERA_KERNEL defines a kernel object; calling it with host arguments
// launches it. The accepted argument types come from the kernel's parameter types, so a wrong
// argument is a compile error that says what to pass instead:
//   Out<T, R>  <- Partition<T, R>&&   (moved in; the launch owns it until the work is done)
//   In<T, R>   <- Tensor<T, R>        (a handle is kept until the work is done)
//   Accum<T, R> <- Accumulation<T, R>&& (std::move(t).accumulate(grid); owned like a partition)
//   Scalar<T>  <- a value convertible to T, whose value T holds: checked at launch, so 2^32 for
//                 a Scalar<int32_t>, -1 for a Scalar<uint8_t>, 2.5 for an integer or 1e300 for a
//                 Scalar<float> is a LaunchError naming the kernel, parameter and value
//                 (core/narrowing.hpp; a floating-point T rounds to nearest, as arithmetic does)
// The call returns a Future (future.hpp) that owns every argument; .sync() waits and hands them
// back.
//
// A launch checks everything it can before it takes anything: the arguments are read where the
// caller holds them (validate, describe, trace and compile, check against the device), then
// taken (copies first, then moves, which cannot fail), then the work starts. A launch refused by
// a check leaves every argument with its caller, intact and usable; if the driver refuses the
// start itself, the partitions are moved back into the caller's variables before the error
// propagates.
#pragma once

#include <array>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/core/narrowing.hpp"
#include "tessera/runtime/future.hpp"
#include "tessera/runtime/launch.hpp"
#include "tessera/runtime/tensor.hpp"
#include "tessera/tile/control.hpp"

namespace tessera {

namespace runtime {

template <class P>
struct ParamTraits;
template <Element T, int R>
struct ParamTraits<tile::Out<T, R>> {
  static constexpr ir::ParamKind kind = ir::ParamKind::Out;
  using element = T;
  static constexpr int rank = R;
};
template <Element T, int R>
struct ParamTraits<tile::In<T, R>> {
  static constexpr ir::ParamKind kind = ir::ParamKind::In;
  using element = T;
  static constexpr int rank = R;
};
template <Element T, int R>
struct ParamTraits<tile::Accum<T, R>> {
  static constexpr ir::ParamKind kind = ir::ParamKind::Accum;
  using element = T;
  static constexpr int rank = R;
};
template <Element T>
struct ParamTraits<tile::Scalar<T>> {
  static constexpr ir::ParamKind kind = ir::ParamKind::Scalar;
  using element = T;
  static constexpr int rank = 0;
};

template <class A>
struct HostArg {
  static constexpr bool tensor = false, partition = false, accumulation = false;
};
template <Element T, int R>
struct HostArg<Tensor<T, R>> {
  static constexpr bool tensor = true, partition = false, accumulation = false;
  using element = T;
  static constexpr int rank = R;
};
template <Element T, int R>
struct HostArg<Partition<T, R>> {
  static constexpr bool tensor = false, partition = true, accumulation = false;
  using element = T;
  static constexpr int rank = R;
};
template <Element T, int R>
struct HostArg<Accumulation<T, R>> {
  static constexpr bool tensor = false, partition = false, accumulation = true;
  using element = T;
  static constexpr int rank = R;
};
// Outputs the launch takes over: an Out's partition, an Accum's accumulation.
template <ir::ParamKind K>
inline constexpr bool owned_output = K == ir::ParamKind::Out || K == ir::ParamKind::Accum;

constexpr bool ranks_agree(int a, int b) {
  return a == kDynamicRank || b == kDynamicRank || a == b;
}

// Compile-time check of one argument against its parameter; each failure says what to pass.
// Returns whether the argument fits, so that the launch can stop there and the message is the
// only error the user sees.
template <class P, class A>
constexpr bool check_argument() {
  using D = std::remove_cvref_t<A>;
  using Traits = ParamTraits<P>;
  using H = HostArg<D>;
  if constexpr (Traits::kind == ir::ParamKind::Out) {
    if constexpr (H::tensor) {
      static_assert(always_false<A>,
                    "this argument is for an Out<T> parameter, which writes disjoint tiles: pass "
                    "a partition, std::move(t).partition(tile_shape), not a plain Tensor");
      return false;
    } else if constexpr (!H::partition) {
      static_assert(always_false<A>,
                    "this argument is for an Out<T> parameter: pass a partition, "
                    "std::move(t).partition(tile_shape)");
      return false;
    } else if constexpr (!std::is_same_v<typename H::element, typename Traits::element>) {
      static_assert(always_false<A>,
                    "the partition's element type differs from the kernel's Out<T> parameter");
      return false;
    } else if constexpr (!ranks_agree(H::rank, Traits::rank)) {
      static_assert(
          always_false<A>,
          "the partition's rank differs from the rank of the kernel's Out<T, R> parameter");
      return false;
    } else if constexpr (std::is_lvalue_reference_v<A> ||
                         std::is_const_v<std::remove_reference_t<A>>) {
      static_assert(always_false<A>,
                    "pass the partition with std::move(...): the launch owns it until the work "
                    "is done, and .sync() hands it back");
      return false;
    }
  } else if constexpr (Traits::kind == ir::ParamKind::Accum) {
    if constexpr (!H::accumulation) {
      static_assert(always_false<A>,
                    "this argument is for an Accum<T> parameter, which every block adds into: "
                    "pass std::move(t).accumulate(grid)");
      return false;
    } else if constexpr (!std::is_same_v<typename H::element, typename Traits::element>) {
      static_assert(always_false<A>,
                    "the accumulation's element type differs from the kernel's Accum<T> parameter");
      return false;
    } else if constexpr (!ranks_agree(H::rank, Traits::rank)) {
      static_assert(always_false<A>,
                    "the accumulation's rank differs from the rank of the kernel's Accum<T, R> "
                    "parameter");
      return false;
    } else if constexpr (std::is_lvalue_reference_v<A> ||
                         std::is_const_v<std::remove_reference_t<A>>) {
      static_assert(always_false<A>,
                    "pass the accumulation with std::move(...): the launch owns it until the "
                    "work is done, and .sync() hands it back");
      return false;
    }
  } else if constexpr (Traits::kind == ir::ParamKind::In) {
    if constexpr (H::partition || H::accumulation) {
      static_assert(always_false<A>,
                    "this argument is for an In<T> parameter, but a partition is an output; "
                    "unpartition() it first to read it");
      return false;
    } else if constexpr (!H::tensor) {
      static_assert(always_false<A>, "this argument is for an In<T> parameter: pass a Tensor<T>");
      return false;
    } else if constexpr (!std::is_same_v<typename H::element, typename Traits::element>) {
      static_assert(always_false<A>,
                    "the tensor's element type differs from the kernel's In<T> parameter");
      return false;
    } else if constexpr (!ranks_agree(H::rank, Traits::rank)) {
      static_assert(always_false<A>,
                    "the tensor's rank differs from the rank of the kernel's In<T, R> parameter");
      return false;
    }
  } else {
    if constexpr (H::tensor || H::partition || H::accumulation ||
                  !std::is_convertible_v<D, typename Traits::element>) {
      static_assert(always_false<A>,
                    "this argument is for a Scalar<T> parameter: pass a value convertible to T");
      return false;
    }
  }
  return true;
}

// Describes argument `index` for the launch, reading it where the caller holds it. A scalar is
// converted to its parameter's type here, refused if that would change its value
// (core/narrowing.hpp: 2^32 into an i32, -1 into a u8, 2.5 into an integer, 1e300 into an f32).
template <class P, class A>
LaunchArg describe_argument([[maybe_unused]] const KernelSite& site, [[maybe_unused]] size_t index,
                            [[maybe_unused]] size_t count, const A& a) {
  using Traits = ParamTraits<P>;
  using T = typename Traits::element;
  LaunchArg arg;
  arg.kind = Traits::kind;
  arg.dtype = dtype_v<T>;
  arg.declared_rank = Traits::rank;
  if constexpr (Traits::kind == ir::ParamKind::Scalar) {
    if (const Narrowing n = narrowing<T>(a); n != Narrowing::None)
      fail_scalar_narrowing(site, index, count, value_text_of(a), dtype_v<T>, n, site.loc);
    const T v = static_cast<T>(a);
    if constexpr (std::is_integral_v<T>)
      arg.iscalar = static_cast<int64_t>(v);
    else
      arg.scalar = static_cast<double>(
          static_cast<std::conditional_t<std::is_arithmetic_v<T>, T, float>>(v));
  } else {
    arg.tensor = &HandleAccess::of(a);
    if constexpr (Traits::kind == ir::ParamKind::Out) {
      arg.tile = a.tile_shape();
      arg.partitioned = HandleAccess::mark(a);
    } else if constexpr (Traits::kind == ir::ParamKind::Accum) {
      arg.tile = a.grid();  // the grid the launch declares (LaunchArg::tile)
      arg.partitioned = HandleAccess::mark(a);
    }
  }
  return arg;
}

// What a launch takes of an argument, in two steps: copy_argument() makes what can fail to make
// (a handle to an input, a scalar's value) without touching the caller's argument;
// take_argument() then moves what the launch owns (an output's partition) and cannot throw, so
// no argument is ever half taken.
struct Pending {};  // an output, not taken yet
template <class P, class A>
auto copy_argument(const A& a) {
  if constexpr (owned_output<ParamTraits<P>::kind>)
    return Pending{};
  else if constexpr (ParamTraits<P>::kind == ir::ParamKind::In)
    return std::remove_cvref_t<A>(a);
  else
    return static_cast<typename ParamTraits<P>::element>(a);
}
template <class P, class A, class C>
auto take_argument(A&& a, C& copy) noexcept {
  using D = std::remove_cvref_t<A>;
  if constexpr (owned_output<ParamTraits<P>::kind>) {
    static_assert(std::is_nothrow_move_constructible_v<D>);
    return D(std::forward<A>(a));
  } else {
    static_assert(std::is_nothrow_move_constructible_v<C>);
    return C(std::move(copy));
  }
}
// Moves a taken output back into the caller's variable (the start of the work failed).
template <class P, class A, class O>
void give_back(A& caller, O& owned) noexcept {
  if constexpr (owned_output<ParamTraits<P>::kind>) caller = std::move(owned);
}

template <class F>
struct KernelParams : KernelParams<decltype(&F::operator())> {};
template <class C, class... P>
struct KernelParams<void (C::*)(P...) const> {
  using type = std::tuple<P...>;
};

}  // namespace runtime

// A kernel: its body (a callable taking Out/In/Scalar parameters) and where it was defined.
template <class F>
class Kernel {
 public:
  using Params = typename runtime::KernelParams<F>::type;
  static constexpr size_t arity = std::tuple_size_v<Params>;

  constexpr Kernel(const char* name, const char* param_text, SourceLoc loc, F body)
      : name_(name), param_text_(param_text), loc_(loc), body_(body) {}

  template <class... Args>
  auto operator()(Args&&... args) const {
    static_assert(sizeof...(Args) == arity,
                  "wrong number of arguments for this kernel: pass one per kernel parameter");
    if constexpr (sizeof...(Args) == arity)
      return launch(std::make_index_sequence<arity>{}, std::forward<Args>(args)...);
  }

  const char* name() const { return name_; }

 private:
  template <size_t I>
  using P = std::tuple_element_t<I, Params>;

  template <size_t... I, class... Args>
  auto launch(std::index_sequence<I...>, Args&&... args) const {
    constexpr bool fits = (runtime::check_argument<P<I>, Args>() && ...);
    if constexpr (fits) return start(std::index_sequence<I...>{}, std::forward<Args>(args)...);
  }

  template <size_t... I, class... Args>
  auto start(std::index_sequence<I...>, Args&&... args) const {
    // An earlier launch's error that nobody saw (its Future was dropped unsynced) stops this one.
    runtime::refuse_launch_if_an_error_was_lost();
    const runtime::KernelSite site{identity(), name_, param_text_, loc_};
    // 1. Check, reading the arguments where the caller holds them.
    // On the stack: a repeated launch allocates nothing here.
    const std::array<runtime::LaunchArg, arity> described{
        runtime::describe_argument<P<I>>(site, I, arity, args)...};
    runtime::CheckedLaunch checked = runtime::check_launch(
        site, described,
        [this](std::vector<ir::Param> params) {
          return tile::detail::trace(name_, std::move(params), loc_, [this] {
            // Braced initialisation makes the parameters (and their IR) in declaration order.
            std::tuple<P<I>...> values{P<I>(tile::detail::ParamTag{static_cast<int>(I)})...};
            std::apply(body_, std::move(values));
          });
        },
        loc_);
    // 2. Take: copies first (they may throw; nothing is moved yet), then the moves.
    auto copies = std::tuple{runtime::copy_argument<P<I>>(args)...};
    auto owned =
        std::tuple{runtime::take_argument<P<I>>(std::forward<Args>(args), std::get<I>(copies))...};
    // 3. Start. If the driver refuses it, the outputs go back to the caller.
    std::shared_ptr<runtime::Completion> done;
    try {
      done = std::move(checked).start();
    } catch (...) {
      (runtime::give_back<P<I>>(args, std::get<I>(owned)), ...);
      throw;
    }
    return Future<decltype(owned)>(std::move(owned), std::move(done));
  }

  // One address per kernel body (the closure type), however the Kernel object is copied: the
  // specialization cache is keyed on it.
  static const void* identity() {
    static const char id = 0;
    return &id;
  }

  const char* name_;
  const char* param_text_;
  SourceLoc loc_;
  F body_;
};

namespace runtime {
struct KernelMaker {
  const char* name;
  const char* param_text;
  SourceLoc loc;
  template <class F>
  constexpr Kernel<F> operator->*(F body) const {
    return Kernel<F>(name, param_text, loc, body);
  }
};
}  // namespace runtime

}  // namespace tessera

// Defines kernel `name`. The body runs once per tile block (traced once per specialization):
//
//   TESSERA_KERNEL(add, Out<float> z, In<float> x, In<float> y) {
//     z.store(load_like(x, z) + load_like(y, z));
//   };
//
// The definition ends with a semicolon (it is a variable). Put `template <...>` in front for
// kernels with compile-time parameters such as tile sizes, and call them as gemm<128, 64>(...).
#define TESSERA_KERNEL(name, ...)                                                              \
  inline constexpr auto name =                                                                 \
      ::tessera::runtime::KernelMaker{#name, #__VA_ARGS__, ::tessera::SourceLoc::current()}->* \
      [](__VA_ARGS__) -> void

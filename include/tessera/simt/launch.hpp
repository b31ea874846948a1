// Launching SIMT kernels.
//
//   auto add = simt::prepare<vecadd>(module, simt::cover(n, 256));  // checked once
//   auto [z1, x1, y1] = add(std::move(z), x, y).sync();            // checked per call, then run
//
// prepare<K>(module, config) checks the config against K's contract (rank at compile time; block
// shape, shared memory, compute capability and the witness's needs at run time) and against the
// live limits of the device and of K's compiled function, and returns a launch bound to K. Calling
// it binds the host arguments to K's parameters (types at compile time), checks that each output
// is the only handle to its storage and overlaps no other argument, checks the contract's size
// relations with overflow-checked arithmetic, and only then takes the arguments and queues the
// kernel on the device's stream. It returns a Future (the tile path's, runtime/kernel.hpp) that
// owns the arguments until the GPU is done: .sync() waits and hands them back in parameter order,
// .async() keeps it pending. A launch that fails a check throws before any argument is moved.
//
// Host arguments, per parameter type (one ownership model with the tile path's Out and In):
//   DisjointSpan<T>     <- std::move(t): a Tensor<T> that is the only handle to its storage, or a
//   DisjointSpan2D<T>      Partition<T> (std::move(t).partition(tile)); the launch owns it and
//                          .sync() hands it back. Contiguous (2-D: rows contiguous, rank 2).
//   Span<const T>       <- a Tensor<T> (the launch keeps a handle, as for an In), contiguous
//   Span2D<const T>     <- a Tensor<T> of rank 2 whose rows are contiguous (pitch = row stride)
//   arithmetic scalar   <- a value that converts to it without narrowing
//   T* (unchecked only) <- a device pointer (not owned: the caller keeps it alive), or a Tensor<T>
//                          (as a span of the same constness: a mutable pointer takes it moved)
//
// launch_unchecked<K>(module, raw_config, args...) launches any kernel, contract or not, with any
// shape: it checks only what the driver would refuse anyway, and the arguments (types, ownership,
// overlaps). The witness's own check on the device still stops a launch shape under which two
// threads would get the same witness.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/core/narrowing.hpp"  // the scalar rule, shared with the tile path
#include "tessera/runtime/kernel.hpp"
#include "tessera/runtime/tensor.hpp"
#include "tessera/simt/check.hpp"
#include "tessera/simt/kernel.hpp"
#include "tessera/simt/module.hpp"

namespace tessera::simt {

namespace detail {

// Where a tensor argument lies, for the overlap check.
struct ArgRange {
  bool tensor = false;
  bool written = false;
  uintptr_t lo = 0;  // addresses as numbers: compared, never dereferenced
  uintptr_t hi = 0;
  Device device = Device::cpu();
};

// A launch, resolved: what the driver needs besides the arguments.
struct LaunchTarget {
  std::string kernel;
  std::vector<std::string> params;  // parameter names, witness included
  int ordinal = 0;
  Device device = Device::cpu();
  void* function = nullptr;
  Geometry geometry;
};

// Checks a tensor bound to a span or pointer parameter (alive, the only handle to its storage and
// not escaped when it is written, contiguous rows, rank for 2-D spans), fills in its facts and
// range, and returns the address of its first element for the kernel.
// `span_rank` 0 is a pointer parameter.
void* bind_tensor(const LaunchTarget& t, int position, const runtime::TensorHandle& h,
                  int span_rank, bool written, ArgFacts& facts, ArgRange& range);
// Every argument on the launch's device, and no written range overlapping any other range.
void check_ranges(const LaunchTarget& t, const ArgRange* ranges, int count);
// Throws LaunchError for a relation that does not hold (or overflowed).
[[noreturn]] void fail_relation(const LaunchTarget& t, const std::string& text,
                                const std::string& lhs_text, const std::string& rhs_text,
                                const RelationOutcome& outcome, const Overflow& overflow);
// Resolves K's function in the module and the device's limits into a target, after checking the
// signature the module's image carries against the host's (`signature`).
LaunchTarget resolve(const Module& module, std::string_view kernel, std::string_view params,
                     const SignatureRecord& signature);
// Opts in to more than the default dynamic shared memory when the launch needs it.
void reserve_shared(const LaunchTarget& t);
// Queues the launch; returns its completion (done at once for an empty grid).
std::shared_ptr<runtime::Completion> run(const LaunchTarget& t, const void* pack, size_t bytes);

template <class A>
struct TensorArg {
  static constexpr bool value = false, partition = false;
};
template <Element T, int R>
struct TensorArg<Tensor<T, R>> {
  static constexpr bool value = true, partition = false;
  using element = T;
  static constexpr int rank = R;
};
template <Element T, int R>
struct TensorArg<Partition<T, R>> {
  static constexpr bool value = true, partition = true;
  using element = T;
  static constexpr int rank = R;
};

// Whether parameter P is written through: outputs and mutable pointers.
template <class P>
inline constexpr bool writes = is_output_span<P> ||
                               (std::is_pointer_v<P> && !std::is_const_v<std::remove_pointer_t<P>>);

// The compile-time rules for host argument type A (as forwarded) and parameter P; each failure
// says what to pass instead. Returns whether A fits, so that the launch stops there.
template <class P, class A>
constexpr bool check_argument() {
  using D = std::remove_cvref_t<A>;
  constexpr bool moved =
      !std::is_lvalue_reference_v<A> && !std::is_const_v<std::remove_reference_t<A>>;
  if constexpr (is_output_span<P> || is_input_span<P>) {
    if constexpr (!TensorArg<D>::value) {
      static_assert(always_false<A>,
                    "a span parameter takes a tensor: Span<const T> and Span2D<const T> a "
                    "Tensor<T>, DisjointSpan<T> and DisjointSpan2D<T> std::move(t) or a "
                    "partition");
      return false;
    } else if constexpr (!std::is_same_v<typename TensorArg<D>::element,
                                         typename P::element_type>) {
      static_assert(always_false<A>,
                    "the tensor's element type is not the span's: pass a Tensor of the span's "
                    "element type");
      return false;
    } else if constexpr (span_rank<P> == 2 && TensorArg<D>::rank != 2 &&
                         TensorArg<D>::rank != kDynamicRank) {
      static_assert(always_false<A>, "a 2-D span parameter takes a tensor of rank 2");
      return false;
    } else if constexpr (is_output_span<P> && !moved) {
      static_assert(always_false<A>,
                    "an output (DisjointSpan<T>, DisjointSpan2D<T>) is written by the launch, "
                    "which owns it until the GPU is done: pass std::move(t) (the only handle to "
                    "its storage) or a partition, std::move(t).partition(tile), and take it back "
                    "from .sync()");
      return false;
    } else if constexpr (is_input_span<P> && TensorArg<D>::partition) {
      static_assert(always_false<A>,
                    "this argument is for an input span, but a partition is an output; "
                    "unpartition() it first to read it");
      return false;
    }
  } else if constexpr (std::is_pointer_v<P>) {
    using T = std::remove_pointer_t<P>;
    if constexpr (TensorArg<D>::value) {
      if constexpr (!std::is_same_v<typename TensorArg<D>::element, std::remove_const_t<T>>) {
        static_assert(always_false<A>, "the tensor's element type is not the pointer's");
        return false;
      } else if constexpr (std::is_const_v<T> && TensorArg<D>::partition) {
        static_assert(always_false<A>,
                      "this argument is for a const pointer (an input), but a partition is an "
                      "output; unpartition() it first to read it");
        return false;
      } else if constexpr (!std::is_const_v<T> && !moved) {
        static_assert(always_false<A>,
                      "a mutable pointer parameter may be written through: pass the tensor as "
                      "std::move(t) (the only handle to its storage) or a partition; the launch "
                      "owns it until the GPU is done");
        return false;
      }
    } else if constexpr (!std::is_convertible_v<D, P>) {
      static_assert(always_false<A>,
                    "a pointer parameter takes a device pointer of its type, or a Tensor");
      return false;
    }
  } else if constexpr (!Converts<P, D>) {
    static_assert(always_false<A>,
                  "a scalar parameter takes a value that converts to it without narrowing");
    return false;
  }
  return true;
}

// Binds host argument `a` (of forwarded type A, already checked) to parameter type P at body
// position `pos`, for a kernel whose witness is W (void: none). Reads the argument; moves nothing.
template <class W, class P, class A>
P bind(const LaunchTarget& t, int pos, const std::remove_cvref_t<A>& a, ArgFacts& facts,
       ArgRange& range) {
  using D = std::remove_cvref_t<A>;
  if constexpr (TensorArg<D>::value) {
    const runtime::TensorHandle& h = runtime::HandleAccess::of(a);
    void* const address = bind_tensor(t, pos, h, span_rank<P>, writes<P>, facts, range);
    if constexpr (std::is_pointer_v<P>) {
      return static_cast<P>(address);
    } else {
      using T = typename P::element_type;
      T* data = static_cast<T*>(address);
      if constexpr (is_same<P, DisjointSpan<T>>)
        return SpanAccess::output<W>(data, facts.size);
      else if constexpr (is_same<P, Span<const T>>)
        return SpanAccess::input<T>(data, facts.size);
      else if constexpr (is_same<P, DisjointSpan2D<T>>)
        return SpanAccess::output2d<W>(data, facts.rows, facts.cols, h.strides()[0]);
      else
        return SpanAccess::input2d<T>(data, facts.rows, facts.cols, h.strides()[0]);
    }
  } else if constexpr (std::is_pointer_v<P>) {
    return a;
  } else {
    P v{a};
    if constexpr (is_integer_scalar<P>) {
      // The relations compute in index_t; an unsigned value past it would wrap to a negative
      // size there (core/narrowing.hpp, the rule the tile path binds scalars by).
      facts.value = static_cast<index_t>(v);
      facts.value_fits = narrowing<index_t>(v) == Narrowing::None;
      if constexpr (std::is_unsigned_v<P>) facts.unsigned_value = v;
    }
    return v;
  }
}

// What the launch's Future keeps of an argument: a tensor or partition (moved in when written, a
// handle kept when read), a scalar as the parameter's type, a raw pointer as it is.
template <class P, class A>
auto keep(A&& a) {
  using D = std::remove_cvref_t<A>;
  if constexpr (TensorArg<D>::value)
    return D(std::forward<A>(a));
  else if constexpr (std::is_pointer_v<P>)
    return static_cast<P>(a);
  else
    return P{a};
}

// Binds every argument into the pack, their facts and their ranges, and checks the ranges.
template <class K, class... A, unsigned... I>
PackOf<K> bind_arguments(const LaunchTarget& t, ArgFacts* facts, IndexSeq<I...>,
                         const std::remove_cvref_t<A>&... args) {
  using Sig = KernelSignature<K>;
  constexpr int offset = Sig::kHasWitness ? 1 : 0;
  PackOf<K> pack{};
  ArgRange ranges[sizeof...(A) + 1];
  ((PackGet<I>::get(pack) = bind<typename Sig::Witness, TypeAt<I, typename Sig::Params>, A>(
        t, static_cast<int>(I) + offset, args, facts[I + offset], ranges[I])),
   ...);
  check_ranges(t, ranges, static_cast<int>(sizeof...(A)));
  return pack;
}

template <class K, class... A>
constexpr bool check_arguments() {
  using Sig = KernelSignature<K>;
  static_assert(sizeof...(A) == Sig::Params::kSize,
                "the launch passes a different number of arguments than the kernel has "
                "parameters after its witness");
  if constexpr (sizeof...(A) == Sig::Params::kSize) {
    return []<unsigned... I>(IndexSeq<I...>) {
      return (check_argument<TypeAt<I, typename Sig::Params>, A>() && ... && true);
    }
    (MakeIndexSeq<sizeof...(A)>{});
  } else {
    return false;
  }
}

// Checks and binds the arguments, checks the size relations (`relations`), and only then takes
// the arguments into the Future and queues the kernel: a launch refused by a check leaves every
// argument with its caller.
template <class K, class Relations, class... A, unsigned... I>
auto start(const LaunchTarget& t, Relations&& relations, IndexSeq<I...> seq, A&&... args) {
  // An earlier launch's error that nobody saw (its Future was dropped unsynced) stops this one.
  runtime::refuse_launch_if_an_error_was_lost();
  using Sig = KernelSignature<K>;
  ArgFacts facts[Sig::Body::kSize + 1];
  const PackOf<K> pack = bind_arguments<K, A...>(t, facts, seq, args...);
  relations(facts);
  auto owned = std::tuple{keep<TypeAt<I, typename Sig::Params>>(std::forward<A>(args))...};
  std::shared_ptr<runtime::Completion> done = run(t, &pack, sizeof pack);
  return Future<decltype(owned)>(std::move(owned), std::move(done));
}

template <class K>
concept Contracted = requires {
  K::launch_contract();
};

// The contract's static consistency with the kernel's witness.
template <class K>
constexpr bool contract_fits_witness() {
  constexpr auto c = K::launch_contract();
  using C = std::remove_cvref_t<decltype(c)>;
  using W = typename KernelSignature<K>::Witness;
  static_assert(C::kRank == W::kRank,
                "the rank of the kernel's contract (contract<R>()) is not the rank of its "
                "witness: Index1D and WarpIndex1D launch 1-D, Index2D and TileIndex2D 2-D");
  using S = WitnessShape<W>;
  if constexpr (S::block_x != 0) {
    static_assert(c.block_rule != BlockRule::Exactly ||
                      (c.block[0] == S::block_x && c.block[1] == S::block_y),
                  "the contract's exact block shape is not the (BN / TN, BM / TM) threads that "
                  "the kernel's TileIndex2D<BM, BN, TM, TN> witness needs");
  }
  return true;
}

template <class K>
ContractView contract_view() {
  constexpr auto c = K::launch_contract();
  using W = typename KernelSignature<K>::Witness;
  ContractView v;
  v.kernel = K::kName;
  v.rank = c.kRank;
  v.block_rule = c.block_rule;
  for (int a = 0; a < c.kRank; ++a) v.block[a] = c.block[a];
  v.dynamic_shared_bytes = c.dynamic_shared_bytes;
  v.min_cc = c.min_cc;
  v.witness = W::kName;
  v.witness_block[0] = WitnessShape<W>::block_x;
  v.witness_block[1] = WitnessShape<W>::block_y;
  v.block_x_multiple = WitnessShape<W>::block_x_multiple;
  return v;
}

template <class K>
void check_relations(const LaunchTarget& t, const ArgFacts* facts) {
  constexpr auto c = K::launch_contract();
  RelationContext ctx;
  ctx.args = facts;
  for (int a = 0; a < 3; ++a) ctx.threads[a] = t.geometry.grid[a] * t.geometry.block[a];
  for_each_relation(c.relations, [&](const auto& rel) {
    const RelationOutcome o = rel.template evaluate<K>(ctx);
    if (o.holds) return;
    std::string text, lhs, rhs;
    rel.render(text, lhs, rhs);
    fail_relation(t, text, lhs, rhs, o, ctx.overflow);
  });
}

}  // namespace detail

// A launch of kernel K whose shape was checked against K's contract and the device; calling it
// launches K with arguments checked against the contract's size relations, and returns the Future
// that owns them until the GPU is done.
template <class K>
class PreparedLaunch {
 public:
  template <class... A>
  auto operator()(A&&... args) const {
    if constexpr (detail::check_arguments<K, A...>()) {
      return detail::start<K>(
          target_,
          [&](const detail::ArgFacts* facts) { detail::check_relations<K>(target_, facts); },
          detail::MakeIndexSeq<sizeof...(A)>{}, std::forward<A>(args)...);
    }
  }
  const detail::Geometry& geometry() const { return target_.geometry; }

 private:
  template <class K2, int R>
  friend PreparedLaunch<K2> prepare(const Module& module, const LaunchConfig<R>& config);
  explicit PreparedLaunch(detail::LaunchTarget t) : target_(std::move(t)) {}

  detail::LaunchTarget target_;
};

// Checks `config` against K's contract and the live limits of the module's device and of K's
// function, and returns the launch. Throws LaunchError naming K, the rule and both values.
template <class K, int R>
PreparedLaunch<K> prepare(const Module& module, const LaunchConfig<R>& config) {
  static_assert(detail::Contracted<K>,
                "prepare<K>(): this kernel has no launch contract (it was declared with "
                "TESSERA_SIMT_KERNEL_UNCHECKED). Declare it with TESSERA_SIMT_KERNEL and a "
                "contract, or launch it with launch_unchecked.");
  if constexpr (detail::Contracted<K>) {
    static_assert(detail::contract_fits_witness<K>());
    static_assert(R == decltype(K::launch_contract())::kRank,
                  "prepare<K>(config): the config's rank is not the rank of K's contract; a "
                  "kernel whose contract is contract<1>() launches with a LaunchConfig<1>, one "
                  "whose contract is contract<2>() with a LaunchConfig<2>");
    detail::LaunchTarget t =
        detail::resolve(module, K::kName, K::kParams, detail::signature_of<K>());
    for (int a = 0; a < R; ++a) {
      t.geometry.grid[a] = config.grid[a];
      t.geometry.block[a] = config.block[a];
    }
    t.geometry.dynamic_shared_bytes = K::launch_contract().dynamic_shared_bytes;
    detail::check_contracted_launch(detail::contract_view<K>(), t.geometry, module.device_limits(),
                                    module.function(K::kName).limits);
    detail::reserve_shared(t);
    return PreparedLaunch<K>(std::move(t));
  }
}

// Any kernel, any shape: checks only the device's limits and the arguments (types, ownership,
// devices, overlaps), then queues the kernel; returns the Future that owns the arguments.
template <class K, class... A>
auto launch_unchecked(const Module& module, const RawLaunchConfig& config, A&&... args) {
  if constexpr (detail::check_arguments<K, A...>()) {
    detail::LaunchTarget t =
        detail::resolve(module, K::kName, K::kParams, detail::signature_of<K>());
    for (int a = 0; a < 3; ++a) {
      t.geometry.grid[a] = config.grid[a];
      t.geometry.block[a] = config.block[a];
    }
    t.geometry.dynamic_shared_bytes = config.dynamic_shared_bytes;
    detail::check_device_limits(K::kName, t.geometry, module.device_limits(),
                                module.function(K::kName).limits);
    detail::reserve_shared(t);
    return detail::start<K>(
        t, [](const detail::ArgFacts*) {}, detail::MakeIndexSeq<sizeof...(A)>{},
        std::forward<A>(args)...);
  }
}

}  // namespace tessera::simt

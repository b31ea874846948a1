// Launching SIMT kernels.
//
//   auto add = simt::prepare<vecadd>(module, simt::cover(n, 256));  // checked once
//   add(out, x, y);                                                // checked per call, then run
//
// prepare<K>(module, config) checks the config against K's contract (rank at compile time; block
// shape, shared memory, compute capability and the witness's needs at run time) and against the
// live limits of the device and of K's compiled function, and returns a launch bound to K. Calling
// it binds the host arguments to K's parameters (types at compile time), checks that no output
// overlaps another argument, checks the contract's size relations with overflow-checked
// arithmetic, and runs the kernel on the device's stream, waiting for it (operator()) or not
// (enqueue; a failure then surfaces at the next synchronizing call).
//
// Host arguments, per parameter type:
//   DisjointSpan<T>     <- Tensor<T>& (non-const: it is written), contiguous
//   DisjointSpan2D<T>   <- Tensor<T>& of rank 2 whose rows are contiguous (pitch = row stride)
//   Span<const T>       <- const Tensor<T>&, contiguous
//   Span2D<const T>     <- const Tensor<T>& of rank 2 whose rows are contiguous
//   arithmetic scalar   <- a value that converts to it without narrowing
//   T* (unchecked only) <- a device pointer, or a Tensor<T> (non-const for a mutable pointer)
//
// launch_unchecked<K>(module, raw_config, args...) launches any kernel, contract or not, with any
// shape: it checks only what the driver would refuse anyway, and the arguments' types and
// overlaps. The witness's own check on the device still stops a launch shape under which two
// threads would get the same witness.
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

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
  const std::byte* lo = nullptr;
  const std::byte* hi = nullptr;
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

// The names in a parameter list as written ("Index1D i, DisjointSpan<float> out" -> i, out).
std::vector<std::string> param_names(std::string_view params);

// Checks a tensor bound to a span or pointer parameter (alive, contiguous rows, rank for 2-D
// spans) and returns its facts and range. `span_rank` 0 is a pointer parameter.
void bind_tensor(const LaunchTarget& t, int position, const runtime::TensorHandle& h, int span_rank,
                 bool written, ArgFacts& facts, ArgRange& range);
// Every argument on the launch's device, and no written range overlapping any other range.
void check_ranges(const LaunchTarget& t, const ArgRange* ranges, int count);
// Throws LaunchError for a relation that does not hold (or overflowed).
[[noreturn]] void fail_relation(const LaunchTarget& t, const std::string& text,
                                const std::string& lhs_text, const std::string& rhs_text,
                                const RelationOutcome& outcome, const Overflow& overflow);
// Resolves K's function in the module and the device's limits into a target.
LaunchTarget resolve(const Module& module, std::string_view kernel, std::string_view params);
// Opts in to more than the default dynamic shared memory when the launch needs it.
void reserve_shared(const LaunchTarget& t);
void run(const LaunchTarget& t, const void* pack, size_t bytes, bool wait);

template <class A>
struct TensorArg {
  static constexpr bool value = false;
};
template <Element T, int R>
struct TensorArg<Tensor<T, R>> {
  static constexpr bool value = true;
  using element = T;
  static constexpr int rank = R;
};

template <class P, class A>
concept Converts = requires(A a) {
  P{a};
};

// Binds host argument `a` to parameter type P at body position `pos`, for a kernel whose witness
// is W (void: none).
template <class W, class P, class A>
P bind(const LaunchTarget& t, int pos, A&& a, ArgFacts& facts, ArgRange& range) {
  using D = std::remove_cvref_t<A>;
  constexpr bool mutable_lvalue =
      std::is_lvalue_reference_v<A> && !std::is_const_v<std::remove_reference_t<A>>;
  if constexpr (is_output_span<P> || is_input_span<P>) {
    using T = typename P::element_type;
    static_assert(TensorArg<D>::value,
                  "a span parameter takes a Tensor<T> argument (Span<const T> and "
                  "Span2D<const T> a const one, DisjointSpan<T> and DisjointSpan2D<T> a "
                  "non-const one)");
    if constexpr (TensorArg<D>::value) {
      static_assert(std::is_same_v<typename TensorArg<D>::element, T>,
                    "the tensor's element type is not the span's: pass a Tensor of the span's "
                    "element type");
      static_assert(
          span_rank<P> == 1 || TensorArg<D>::rank == 2 || TensorArg<D>::rank == kDynamicRank,
          "a 2-D span parameter takes a tensor of rank 2");
      static_assert(!is_output_span<P> || mutable_lvalue,
                    "an output (DisjointSpan<T>, DisjointSpan2D<T>) is written by the launch: "
                    "pass the Tensor<T> itself, as a non-const lvalue, not a const or temporary "
                    "one");
      const runtime::TensorHandle& h = a.handle();
      bind_tensor(t, pos, h, span_rank<P>, is_output_span<P>, facts, range);
      T* data = static_cast<T*>(h.data());
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
    using T = std::remove_pointer_t<P>;
    if constexpr (TensorArg<D>::value) {
      static_assert(std::is_same_v<typename TensorArg<D>::element, std::remove_const_t<T>>,
                    "the tensor's element type is not the pointer's");
      static_assert(std::is_const_v<T> || mutable_lvalue,
                    "a mutable pointer parameter takes a non-const Tensor<T> lvalue (it may be "
                    "written)");
      const runtime::TensorHandle& h = a.handle();
      bind_tensor(t, pos, h, 0, !std::is_const_v<T>, facts, range);
      return static_cast<P>(h.data());
    } else {
      static_assert(std::is_convertible_v<D, P>,
                    "a pointer parameter takes a device pointer of its type, or a Tensor");
      return a;
    }
  } else {
    static_assert(Converts<P, D>,
                  "a scalar parameter takes a value that converts to it without narrowing");
    if constexpr (Converts<P, D>) {
      P v{a};
      if constexpr (is_integer_scalar<P>) facts.value = static_cast<index_t>(v);
      return v;
    }
  }
}

// Binds every argument into the pack, their facts and their ranges.
template <class K, class... A, unsigned... I>
void bind_all(const LaunchTarget& t, PackOf<K>& pack, ArgFacts* facts, ArgRange* ranges,
              IndexSeq<I...>, A&&... args) {
  using Sig = KernelSignature<K>;
  constexpr int offset = Sig::kHasWitness ? 1 : 0;
  ((PackGet<I>::get(pack) = bind<typename Sig::Witness, TypeAt<I, typename Sig::Params>>(
        t, static_cast<int>(I) + offset, std::forward<A>(args), facts[I + offset], ranges[I])),
   ...);
}

template <class K, class... A>
PackOf<K> bind_arguments(const LaunchTarget& t, ArgFacts* facts, A&&... args) {
  using Sig = KernelSignature<K>;
  static_assert(sizeof...(A) == Sig::Params::kSize,
                "the launch passes a different number of arguments than the kernel has "
                "parameters after its witness");
  PackOf<K> pack{};
  ArgRange ranges[sizeof...(A) + 1];
  bind_all<K>(t, pack, facts, ranges, MakeIndexSeq<sizeof...(A)>{}, std::forward<A>(args)...);
  check_ranges(t, ranges, static_cast<int>(sizeof...(A)));
  return pack;
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
// launches K with arguments checked against the contract's size relations.
template <class K>
class PreparedLaunch {
 public:
  // Runs K on the arguments and waits for it.
  template <class... A>
  void operator()(A&&... args) const {
    launch(true, std::forward<A>(args)...);
  }
  // Queues K on the device's stream and returns; a failure of the kernel surfaces at the next
  // synchronizing call (a copy to the host, or a launch through operator()).
  template <class... A>
  void enqueue(A&&... args) const {
    launch(false, std::forward<A>(args)...);
  }
  const detail::Geometry& geometry() const { return target_.geometry; }

 private:
  template <class K2, int R>
  friend PreparedLaunch<K2> prepare(const Module& module, const LaunchConfig<R>& config);
  explicit PreparedLaunch(detail::LaunchTarget t) : target_(std::move(t)) {}

  template <class... A>
  void launch(bool wait, A&&... args) const {
    detail::ArgFacts facts[detail::KernelSignature<K>::Body::kSize + 1];
    const detail::PackOf<K> pack =
        detail::bind_arguments<K>(target_, facts, std::forward<A>(args)...);
    detail::check_relations<K>(target_, facts);
    if (target_.geometry.empty()) return;
    detail::run(target_, &pack, sizeof pack, wait);
  }

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
    detail::LaunchTarget t = detail::resolve(module, K::kName, K::kParams);
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

namespace detail {
template <class K, class... A>
void launch_raw(bool wait, const Module& module, const RawLaunchConfig& config, A&&... args) {
  LaunchTarget t = resolve(module, K::kName, K::kParams);
  for (int a = 0; a < 3; ++a) {
    t.geometry.grid[a] = config.grid[a];
    t.geometry.block[a] = config.block[a];
  }
  t.geometry.dynamic_shared_bytes = config.dynamic_shared_bytes;
  check_device_limits(K::kName, t.geometry, module.device_limits(),
                      module.function(K::kName).limits);
  reserve_shared(t);
  ArgFacts facts[KernelSignature<K>::Body::kSize + 1];
  const PackOf<K> pack = bind_arguments<K>(t, facts, std::forward<A>(args)...);
  if (t.geometry.empty()) return;
  run(t, &pack, sizeof pack, wait);
}
}  // namespace detail

// Any kernel, any shape: checks only the device's limits and the arguments (types, devices,
// overlaps), then runs the kernel and waits for it.
template <class K, class... A>
void launch_unchecked(const Module& module, const RawLaunchConfig& config, A&&... args) {
  detail::launch_raw<K>(true, module, config, std::forward<A>(args)...);
}
// The same, queued on the device's stream without waiting (as PreparedLaunch::enqueue).
template <class K, class... A>
void enqueue_unchecked(const Module& module, const RawLaunchConfig& config, A&&... args) {
  detail::launch_raw<K>(false, module, config, std::forward<A>(args)...);
}

}  // namespace tessera::simt

// Launch contracts. A checked kernel states, in its declaration, what a launch of it must look
// like:
//
//   contract<2>()                      the launch is 2-D (the rank of the kernel's witness)
//     .block_exactly(16, 16)           block shape, x first; or .block_at_most(...)
//     .dynamic_shared(8192)            bytes of dynamic shared memory each block gets
//     .min_compute_capability(9, 0)    oldest GPU it runs on (default 8.0)
//     .require(rows<"c"> == rows<"a">, cols<"a"> == rows<"b">)   size relations (relation.hpp)
//
// prepare<K>(config) checks a LaunchConfig against the contract and the live device and function
// limits once; the launch it returns checks the size relations against every call's arguments.
// A contract is a constexpr value: its type carries the relations, its members the rest.
#pragma once

#include <cstdint>

#include "tessera/simt/relation.hpp"

namespace tessera::simt {

// A compute capability, e.g. {9, 0} for the H100 and H200.
struct ComputeCapability {
  int major = 8;
  int minor = 0;
  friend constexpr bool operator<(ComputeCapability a, ComputeCapability b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
};

// Launch extents of rank R, x first: Dims<2>{32, 8} is 32 along x and 8 along y.
template <int R>
struct Dims {
  static_assert(R >= 1 && R <= 3, "a launch has rank 1, 2 or 3");
  index_t v[R] = {};
  constexpr index_t operator[](int axis) const { return v[axis]; }
  constexpr index_t product() const {
    index_t p = 1;
    for (int i = 0; i < R; ++i) p *= v[i];
    return p;
  }
};

// A launch of a contracted kernel: grid and block of the kernel's rank. The dynamic shared memory
// is the contract's.
template <int R>
struct LaunchConfig {
  static constexpr int kRank = R;
  Dims<R> grid;
  Dims<R> block;
};

// The blocks a 1-D launch of `block` threads needs to give one thread to each of n elements.
inline constexpr LaunchConfig<1> cover(index_t n, index_t block) {
  // n / block rounded up without n + block - 1, which overflows for n near the top of index_t.
  return {{{n > 0 && block > 0 ? n / block + (n % block != 0 ? 1 : 0) : 0}}, {{block}}};
}

// A launch outside any contract (launch_unchecked): CUDA's three axes and the shared memory.
struct RawLaunchConfig {
  index_t grid[3] = {1, 1, 1};
  index_t block[3] = {1, 1, 1};
  index_t dynamic_shared_bytes = 0;
};

enum class BlockRule : uint8_t { Any, Exactly, AtMost };

template <int R, class... Rels>
struct Contract;

namespace detail {
template <class... R>
struct RelationList {};
template <class H, class... T>
struct RelationList<H, T...> {
  H head;
  RelationList<T...> tail;
};
constexpr RelationList<> relation_list() {
  return {};
}
template <class H, class... T>
constexpr RelationList<H, T...> relation_list(H h, T... t) {
  return {h, relation_list(t...)};
}
template <class... A, class... B>
constexpr RelationList<A..., B...> append(const RelationList<A...>& a, B... b) {
  if constexpr (sizeof...(A) == 0)
    return relation_list(b...);
  else
    return {a.head, append(a.tail, b...)};
}

template <class F, class... R>
void for_each_relation(const RelationList<R...>& list, F&& f) {
  if constexpr (sizeof...(R) > 0) {
    f(list.head);
    for_each_relation(list.tail, f);
  }
}
}  // namespace detail

template <int R, class... Rels>
struct Contract {
  static_assert(R >= 1 && R <= 3, "contract<R>(): a launch has rank 1, 2 or 3");
  static constexpr int kRank = R;

  BlockRule block_rule = BlockRule::Any;
  Dims<R> block = {};  // the exact shape, or the largest extent along each axis
  index_t dynamic_shared_bytes = 0;
  ComputeCapability min_cc = {8, 0};
  detail::RelationList<Rels...> relations = {};

  template <class... E>
  constexpr Contract block_exactly(E... extents) const {
    static_assert(sizeof...(E) == R,
                  "block_exactly() takes one extent per axis of the contract's rank, x first");
    Contract c = *this;
    c.block_rule = BlockRule::Exactly;
    c.block = Dims<R>{{static_cast<index_t>(extents)...}};
    return c;
  }
  template <class... E>
  constexpr Contract block_at_most(E... extents) const {
    static_assert(sizeof...(E) == R,
                  "block_at_most() takes one extent per axis of the contract's rank, x first");
    Contract c = *this;
    c.block_rule = BlockRule::AtMost;
    c.block = Dims<R>{{static_cast<index_t>(extents)...}};
    return c;
  }
  constexpr Contract dynamic_shared(index_t bytes) const {
    Contract c = *this;
    c.dynamic_shared_bytes = bytes;
    return c;
  }
  constexpr Contract min_compute_capability(int major, int minor) const {
    Contract c = *this;
    c.min_cc = {major, minor};
    return c;
  }
  template <class... New>
  constexpr Contract<R, Rels..., New...> require(New... rels) const {
    static_assert((detail::is_relation<New> && ... && true),
                  "require() takes size relations such as size<\"out\"> >= size<\"x\">");
    Contract<R, Rels..., New...> c;
    c.block_rule = block_rule;
    c.block = block;
    c.dynamic_shared_bytes = dynamic_shared_bytes;
    c.min_cc = min_cc;
    c.relations = detail::append(relations, rels...);
    return c;
  }

  // The most threads a block of this contract can have (the entry's __launch_bounds__).
  constexpr index_t max_block_threads() const {
    if (block_rule == BlockRule::Any) return 1024;
    const index_t p = block.product();
    return p < 1024 ? p : 1024;
  }
};

namespace detail {

template <class T>
inline constexpr bool is_contract = false;
template <int R, class... Rels>
inline constexpr bool is_contract<Contract<R, Rels...>> = true;

// The words a contract is written in, inherited by every kernel declaration so that its contract
// body reads without qualification.
struct ContractVocabulary {
  template <int R>
  static constexpr Contract<R> contract() {
    return {};
  }
  template <FixedString N>
  static constexpr ArgExpr<Fact::Size, N> size{};
  template <FixedString N>
  static constexpr ArgExpr<Fact::Rows, N> rows{};
  template <FixedString N>
  static constexpr ArgExpr<Fact::Cols, N> cols{};
  template <FixedString N>
  static constexpr ArgExpr<Fact::Value, N> value{};
  template <int Axis>
  static constexpr ThreadsExpr<Axis> threads{};
};

}  // namespace detail
}  // namespace tessera::simt

// Decode attention: one query token per sequence against its KV cache, in two launches.
//
// 1. One tile block per (sequence, query head, chunk of cache positions) runs the online softmax
//    over its chunk's key tiles and stores its partial result: the unnormalized output acc [D]
//    and m, its max score, and l, its sum of exp(score - m). A chunk past the sequence's length
//    runs no iteration and stores m = -inf, l = 0, acc = 0.
// 2. One block per (sequence, head) (or a quarter of its columns, TESSERA_AB_COMBINE_SPLIT=4)
//    combines the chunks, kCombine at a time: out = sum_c
//    e^(m_c - M) acc_c / sum_c e^(m_c - M) l_c, with M the largest m_c (an empty chunk weighs 0).
//
// A single query row makes the scores a matrix-vector product, so they are elementwise products
// and sums rather than an mma. The paged variant differs only in where key tile j comes from: the
// page the sequence's block_table row names.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host.hpp"
#include "tessera/kernels/attention.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

// A contiguous cache: chunks of kCacheChunk positions, each read as ONE [kCacheChunk, D] key
// tile and one value tile whose loads are all issued before any is used, so a block waits on
// memory once, not once per key tile (the earlier kernels walked [2, D] or [16, D] tiles in a
// loop: a serial chain of dependent loads, latency-bound at ~30 us a layer for ~2 MB). The
// planner gives a [32, 128] tile four warps (32 values a thread).
constexpr int kCacheChunk = 32;
// Chunks a combine step reads at once: one step covers 32 * 32 = 1024 positions (a loop step is
// another wait on memory).
constexpr int kCombine = 32;
// A paged cache: chunks of kDecodeChunk positions, in tiles of one page.
constexpr int kChunk = static_cast<int>(kDecodeChunk);

// The query row of this block's (sequence b, head h), [1, D] in f32, from q [B, Hq, D] or
// [B, 1, Hq, D].
template <Element T, int R>
Tile<float> query_row(const In<T, R>& q, const Index& b, const Index& h, int64_t dim) {
  if constexpr (R == 4)
    return load(q, {b, 0, h, 0}, {1, 1, 1, dim}).template cast<float>().reshape({1, dim});
  else
    return load(q, {b, h, 0}, {1, 1, dim}).template cast<float>().reshape({1, dim});
}

struct KeyValueTiles {
  Tile<float> k, v;
};

// m [1, 1] and l [1, 1] of a chunk as the [1, 1, 1, 1] tiles stored for it.
void store_ml(const Out<float, 4>& m_out, const Out<float, 4>& l_out, const Tile<float>& m,
              const Tile<float>& l) {
  m_out.store(m.reshape({1, 1, 1, 1}));
  l_out.store(l.reshape({1, 1, 1, 1}));
}

// The online softmax of this block's chunk of cache positions, in key tiles of Rows positions:
// keys(j) gives tile j's keys and values as [Rows, D] f32 tiles; one (m, l, acc) for the whole
// tile, reduced across its rows every tile. Stores the chunk's unnormalized output and its (m, l).
// A contiguous cache's chunk is one tile (the loop runs once, or not at all past the length).
//
// Every reduction is along a tile's last axis (the code generator's fast path: registers, then
// shuffles, then one exchange between warps): the scores as a [1, Rows] row, and the values
// transposed, [D, Rows], so that p * V sums along the positions as rows. (A sum along axis 0 went
// through shared memory, each result element summed by one thread in a serial chain, most of the
// ~30 us a layer the kernel took in s11; it is now split among the threads, partials in
// registers and a tree (docs/dsl.md, Reductions), not yet measured against this form.) The
// transpose of a [Rows, D] tile goes through shared memory, so pages of 256 positions (a [256, 128]
// f32 tile, 128 KB) keep the column form (ColumnSums).
template <int Rows, int Chunk, bool ColumnSums, class KeyTiles>
void chunk_softmax(const Out<float, 4>& acc_out, const Out<float, 4>& m_out,
                   const Out<float, 4>& l_out, const Tile<float>& qt, const Index& len,
                   const Tile<float>& scale, KeyTiles&& keys) {
  static_assert(Chunk % Rows == 0, "a chunk is a whole number of key tiles");
  const int64_t dim = acc_out.shape()[3];
  const Index chunk = tile_index(2);
  const Index first_tile = chunk * (Chunk / Rows);
  const Index end_tile = (minimum(len, (chunk + 1) * Chunk) + (Rows - 1)) / Rows;
  Tile<float> m = Tile<float>::full({1, 1}, -INFINITY);
  Tile<float> l = Tile<float>::zeros({1, 1});
  Tile<float> acc = Tile<float>::zeros({1, dim});
  for_range(first_tile, end_tile, [&](Index j) {
    const auto [kt, vt] = keys(j);
    if constexpr (!ColumnSums) {
      const Index key = iota<int32_t>({1, Rows}, 1) + j * Rows;
      const Tile<float> s =  // [1, Rows]
          select(key < len, (sum(kt * qt, 1) * scale).reshape({1, Rows}), -INFINITY);
      const Tile<float> m_new = maximum(m, max(s, 1));
      const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
      const Tile<float> alpha = exp(m - shift);
      const Tile<float> p = exp(s - shift);
      // The value tile's load first (see below).
      acc = sum(vt.transpose() * p, 1).reshape({1, dim}) + acc * alpha;
      l = l * alpha + sum(p, 1);
      m = m_new;
      return;
    }
    const Index key = iota<int32_t>({Rows, 1}, 0) + j * Rows;
    const Tile<float> s = select(key < len, sum(kt * qt, 1) * scale, -INFINITY);  // [Rows, 1]
    const Tile<float> m_new = maximum(m, max(s, 0));
    const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
    const Tile<float> alpha = exp(m - shift);
    const Tile<float> p = exp(s - shift);
    // acc first, and vt first in it: the loop's carried values are ordered by first assignment
    // and canonical_order places each pure op before its first use, operands left to right, so
    // this puts the value tile's load before the key tile's, both ahead of the first reduction
    // (whose barriers would otherwise keep the value load waiting until the scores are done).
    acc = sum(vt * p, 0) + acc * alpha;
    l = l * alpha + sum(p, 0);
    m = m_new;
  });
  acc_out.store(acc.reshape({1, 1, 1, dim}));
  store_ml(m_out, l_out, m, l);
}

// Rows positions of one head from x [N, S, H, D] at (n, tile j of Rows, head h), [Rows, D] in f32.
template <Element T>
Tile<float> position_rows(const In<T, 4>& x, const Index& n, const Index& j, const Index& h,
                          int64_t rows, int64_t dim, Pad pad = {}) {
  return load(x, {n, j, h, 0}, {1, rows, 1, dim}, pad).template cast<float>().reshape({rows, dim});
}

// Chunk positions a block (kCacheChunk). A [32, 128] key tile and its value tile give a block 128
// threads and 255 registers (ptxas, sm_90a, bf16), two blocks a multiprocessor: Qwen3-0.6B's 16
// heads over 19 chunks of a 584-position cache are 304 blocks, two waves on 132 multiprocessors.
// Chunks of 16 (half the tiles and threads a block, so more fit at once) made the batch-1 decode
// step 2.6% slower on an H100 (1.621 against 1.579 ms, session 19): 32 it is.
template <Element T, int QR, int Chunk>
TESSERA_KERNEL(decode_attention_chunks, Out<float, 4> acc_out, Out<float, 4> m_out,
               Out<float, 4> l_out, In<T, QR> q, In<T, 4> k_cache, In<T, 4> v_cache,
               In<int32_t, 1> lengths, Scalar<float> scale) {
  const int64_t dim = acc_out.shape()[3];
  const Index b = tile_index(0), h = tile_index(1);
  const Index kv_head = h / (q.dim(QR - 2) / k_cache.dim(2)).template cast<int32_t>();
  // Padded: b < B = lengths' extent (checked on the host), and an unpadded load would give the
  // kernel an error report, which a captured graph copies out in a node of its own.
  const Index len = load(lengths, {b}, {1}).reshape({});
  chunk_softmax<Chunk, Chunk, false>(
      acc_out, m_out, l_out, query_row(q, b, h, dim), len, scale, [&](const Index& j) {
        return KeyValueTiles{position_rows(k_cache, b, j, kv_head, Chunk, dim),
                             position_rows(v_cache, b, j, kv_head, Chunk, dim)};
      });
};

// The same over a paged cache: key tile j of sequence b is page block_table[b, j], read whole
// (a gather, like the embedding lookup). Unpadded, so a page id outside the pool is a BoundsError.
template <Element T, int Page>
TESSERA_KERNEL(paged_decode_attention_chunks, Out<float, 4> acc_out, Out<float, 4> m_out,
               Out<float, 4> l_out, In<T, 3> q, In<T, 4> k_pages, In<T, 4> v_pages,
               In<int32_t, 2> block_table, In<int32_t, 1> lengths, Scalar<float> scale) {
  const int64_t dim = acc_out.shape()[3];
  const Index b = tile_index(0), h = tile_index(1);
  const Index kv_head = h / (q.dim(1) / k_pages.dim(2)).template cast<int32_t>();
  const Index len = load(lengths, {b}, {1}, Pad::none()).reshape({});
  chunk_softmax<Page, kChunk, true>(
      acc_out, m_out, l_out, query_row(q, b, h, dim), len, scale, [&](const Index& j) {
        const Index page = load(block_table, {b, j}, {1, 1}, Pad::none()).reshape({});
        const Index first_row = Index::zeros({});
        return KeyValueTiles{
            position_rows(k_pages, page, first_row, kv_head, Page, dim, Pad::none()),
            position_rows(v_pages, page, first_row, kv_head, Page, dim, Pad::none())};
      });
};

// The running (M, num, den) of a combine, folded with kCombine chunks from chunk step c: their
// (m, l) along the last axis, as chunk_softmax's scores ([1, kCombine]; chunks past the end weigh
// e^-inf = 0), and their acc transposed to [D, kCombine].
struct CombineState {
  Tile<float> big_m, num, den;
};
inline CombineState combine_step(const CombineState& s, const In<float, 4>& acc_in,
                                 const In<float, 4>& m_in, const In<float, 4>& l_in, const Index& b,
                                 const Index& h, const Index& c, int64_t dim,
                                 const IndexArg& first) {
  const Tile<float> m =
      load(m_in, {b, h, c, 0}, {1, 1, kCombine, 1}, Pad::neg_inf()).reshape({1, kCombine});
  const Tile<float> l = load(l_in, {b, h, c, 0}, {1, 1, kCombine, 1}).reshape({1, kCombine});
  const Tile<float> acc =
      load(acc_in, {b, h, c, first}, {1, 1, kCombine, dim}).reshape({kCombine, dim});
  const Tile<float> m_new = maximum(s.big_m, max(m, 1));
  const Tile<float> shift = select(m_new != -INFINITY, m_new, 0.0f);
  const Tile<float> alpha = exp(s.big_m - shift), weight = exp(m - shift);
  // All three loads are issued before the max's barriers (the code generator issues a kernel's
  // independent loads first: load_order.hpp).
  Tile<float> num = sum(acc.transpose() * weight, 1).reshape({1, dim}) + s.num * alpha;
  return {m_new, num, s.den * alpha + sum(l * weight, 1)};
}

// o is [B, Hq, D] (tiles [1, 1, D / Split]) or [B, Hq * D] (tiles [1, D / Split]): tile (b, h)
// and, with Split > 1, its part of the head's D columns.
// Whole: the cache has at most kCombine chunks, all read in one step without looking at the
// length (a chunk past it holds m = -inf, l = 0, acc = 0), so the block's loads do not wait for
// the length's (a decode step's combine is a chain of waits on memory: one fewer is ~1 of its
// ~8 us). Otherwise only the chunks that hold a visible position, kCombine a step: a cache far
// longer than the context costs the combine nothing.
// Split (TESSERA_AB_COMBINE_SPLIT=4, an A/B switch): each block combines D / Split columns of its
// head, every block reading the head's (m, l). Qwen3-0.6B's batch-1 combine is 16 blocks of 128
// threads holding [32, 128] partials (ncu, H100, session 20: 7.1 us, 10% of the step); split in
// four it is 64 blocks of one warp holding [32, 32], whose exchanges stay within the warp.
template <Element T, int R, bool Whole, int Split = 1>
TESSERA_KERNEL(decode_attention_combine, Out<T, R> o, In<float, 4> acc_in, In<float, 4> m_in,
               In<float, 4> l_in, In<int32_t, 1> lengths, Scalar<int32_t> chunk_positions) {
  const int64_t dim = o.shape()[R - 1];  // the tile's columns: D / Split
  const Index b = tile_index(0), t1 = tile_index(1);
  // R == 3: tile (b, h, part); R == 2: tile (b, h * Split + part). The partials' columns are
  // loaded at tile `part` of dim columns; Split 1 traces no op for it (a constant 0 where the
  // partials are loaded, as before the switch).
  const Index h = R == 3 || Split == 1 ? t1 : t1 / Split;
  std::optional<Index> part;
  if constexpr (Split > 1) part = R == 3 ? tile_index(2) : t1 % Split;
  const IndexArg first = part ? IndexArg(*part) : IndexArg(0);
  CombineState s{Tile<float>::full({1, 1}, -INFINITY), Tile<float>::zeros({1, dim}),
                 Tile<float>::zeros({1, 1})};
  if constexpr (Whole) {
    s = combine_step(s, acc_in, m_in, l_in, b, h, Index::zeros({}), dim, first);
  } else {
    // Padded: b < B, checked on the host.
    const Index len = load(lengths, {b}, {1}).reshape({});
    const Index chunks = minimum((len + chunk_positions - 1) / chunk_positions,
                                 acc_in.dim(2).template cast<int32_t>());
    const Index steps = (chunks + (kCombine - 1)) / kCombine;
    Tile<float> big_m = s.big_m, num = s.num, den = s.den;
    for_range(0, steps, [&](Index c) {
      const CombineState next =
          combine_step({big_m, num, den}, acc_in, m_in, l_in, b, h, c, dim, first);
      big_m = next.big_m;
      num = next.num;
      den = next.den;
    });
    s = {big_m, num, den};
  }
  Shape tile(R, 1);
  tile.back() = dim;
  o.store((s.num / s.den).template cast<T>().reshape(tile));
};

// q's extents (B, Hq, D): q is [B, Hq, D], or [B, 1, Hq, D] (one token of each sequence).
struct QueryExtents {
  int64_t batch, heads, dim;
};
template <Element T, int R>
QueryExtents query_extents(const Tensor<T, R>& q) {
  return {q.dim(0), q.dim(R - 2), q.dim(R - 1)};
}

// Checks q against caches [N, S, Hkv, D] (N: sequences, or pages of S positions each).
template <Element T, int R>
void check_decode_args(const char* fn, const Tensor<T, R>& q, const char* k_name,
                       const Tensor<T, 4>& k, const Tensor<T, 4>& v,
                       const Tensor<int32_t, 1>& lengths, bool paged, SourceLoc l) {
  detail::require_nonempty(fn, "q", q.shape(), R, l);
  const char* layout = R == 4 ? "q [B, 1, Hq, D]" : "q [B, Hq, D]";
  detail::require(R == 3 || q.dim(1) == 1, l,
                  std::string(fn) + ": 'q' is " + to_string(q.shape()) +
                      "; a 4-axis q is [B, 1, Hq, D], one query token of each sequence");
  const QueryExtents e = query_extents(q);
  detail::require((paged || k.dim(0) == e.batch) && k.dim(3) == e.dim, l,
                  std::string(fn) + ": 'q' is " + to_string(q.shape()) + " and '" + k_name +
                      "' is " + to_string(k.shape()) + "; " + layout +
                      (paged ? " needs pages [P, page_size, Hkv, D] of the same D"
                             : " needs a cache [B, S, Hkv, D] of the same B and D"));
  detail::require_shape(fn, paged ? "v_pages" : "v_cache", v.shape(), k.shape(), l);
  detail::require(e.heads % k.dim(2) == 0, l,
                  std::string(fn) + ": 'q' has " + std::to_string(e.heads) + " heads and '" +
                      k_name + "' has " + std::to_string(k.dim(2)) +
                      "; grouped-query attention needs the query heads to be a multiple of the "
                      "key/value heads");
  detail::require_shape(fn, "lengths", lengths.shape(), {e.batch}, l);
  detail::require_same_device(fn, k_name, k.device(), q.device(), l);
  detail::require_same_device(fn, paged ? "v_pages" : "v_cache", v.device(), q.device(), l);
  detail::require_same_device(fn, "lengths", lengths.device(), q.device(), l);
}

// Reads the lengths to the host and checks each is in [1, max_len]: they decide which positions
// are read, so one past the end would read another sequence's cache.
void check_lengths(const char* fn, const Tensor<int32_t, 1>& lengths, int64_t max_len,
                   const char* what, SourceLoc l) {
  const std::vector<int32_t> lens = lengths.to_vector();
  for (size_t b = 0; b < lens.size(); ++b)
    detail::require(lens[b] >= 1 && lens[b] <= max_len, l,
                    std::string(fn) + ": lengths[" + std::to_string(b) + "] is " +
                        std::to_string(lens[b]) + " but must be in [1, " + std::to_string(max_len) +
                        "], " + what);
}

float default_scale(std::optional<float> scale, int64_t dim) {
  return scale.value_or(static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim))));
}

// The partial results of `chunks` chunks per (sequence, head): acc [B, Hq, chunks, D] and
// m and l [B, Hq, chunks, 1], one tile block per chunk.
struct Partials {
  Partition<float, 4> acc;
  Partition<float, 4> m, l;
  Partials(int64_t batch, int64_t heads, int64_t chunks, int64_t dim, Device device, SourceLoc loc)
      : acc(detail::new_tensor<float, 4>({batch, heads, chunks, dim}, device, loc)
                .partition({1, 1, 1, dim})),
        m(detail::new_tensor<float, 4>({batch, heads, chunks, 1}, device, loc)
              .partition({1, 1, 1, 1})),
        l(detail::new_tensor<float, 4>({batch, heads, chunks, 1}, device, loc)
              .partition({1, 1, 1, 1})) {}
};

// TESSERA_AB_COMBINE_SPLIT=4 (an A/B switch for the next GPU session): the combine's blocks each
// take a quarter of a head's columns, where D is a multiple of 4 * 8; else 1, said once on stderr
// (an A/B run would otherwise time the default under the switch's name).
int combine_split(int64_t dim) {
  const char* e = std::getenv("TESSERA_AB_COMBINE_SPLIT");
  if (!e) return 1;
  if (std::atoi(e) == 4 && dim % 32 == 0) return 4;
  static std::once_flag said;
  std::call_once(said, [&] {
    std::fprintf(stderr,
                 "tessera: TESSERA_AB_COMBINE_SPLIT=%s is not used here (it takes 4, for a head "
                 "dimension that is a multiple of 32; this one is %lld)\n",
                 e, static_cast<long long>(dim));
  });
  return 1;
}

// The chunks' partials combined into o ([B, Hq, D], or [B, Hq * D] when merged), a block per
// head's `dim` columns (or a quarter of them, combine_split): decode_attention_combine in one
// step, without the lengths, when the partials hold at most kCombine chunks; else in steps over
// the visible chunks. (The one-step kernel still takes the lengths, unread: one signature for
// both, and a graph orders it after their writer either way.)
template <Element T, int R>
Tensor<T, R> run_combine(Tensor<T, R> o, int64_t dim, Partition<float, 4> acc,
                         Partition<float, 4> m, Partition<float, 4> ls,
                         const Tensor<int32_t, 1>& lengths, int32_t chunk) {
  const int64_t chunks = acc.shape()[2];
  auto launch = [&]<int Split>() {
    Shape tile(R, 1);
    tile.back() = dim / Split;
    auto run = [&](auto kernel) {
      auto [o1, acc1, m1, l1, len1, c1] =
          kernel(std::move(o).partition(std::move(tile)), std::move(acc).unpartition(),
                 std::move(m).unpartition(), std::move(ls).unpartition(), lengths, chunk)
              .sync();
      return std::move(o1).unpartition();
    };
    return chunks <= kCombine ? run(decode_attention_combine<T, R, true, Split>)
                              : run(decode_attention_combine<T, R, false, Split>);
  };
  return combine_split(dim) == 4 ? launch.template operator()<4>()
                                 : launch.template operator()<1>();
}

template <Element T>
Tensor<T, 3> combine(const Tensor<T, 3>& q, const Tensor<int32_t, 1>& lengths, int32_t chunk,
                     Partition<float, 4> acc, Partition<float, 4> m, Partition<float, 4> ls,
                     SourceLoc l) {
  return run_combine<T, 3>(detail::new_tensor<T, 3>(q.shape(), q.device(), l), q.dim(2),
                           std::move(acc), std::move(m), std::move(ls), lengths, chunk);
}

template <Element T, int R>
Tensor<T, 2> combine_merged(const Tensor<T, R>& q, const Tensor<int32_t, 1>& lengths, int32_t chunk,
                            Partition<float, 4> acc, Partition<float, 4> m, Partition<float, 4> ls,
                            SourceLoc l) {
  const QueryExtents e = query_extents(q);
  return run_combine<T, 2>(detail::new_tensor<T, 2>({e.batch, e.heads * e.dim}, q.device(), l),
                           e.dim, std::move(acc), std::move(m), std::move(ls), lengths, chunk);
}

// The chunks of a contiguous cache, handed to finish (combine or combine_merged).
template <Element T, int QR, class Finish>
auto run_contiguous(const char* fn, const Tensor<T, QR>& q, const Tensor<T, 4>& k_cache,
                    const Tensor<T, 4>& v_cache, const Tensor<int32_t, 1>& lengths,
                    std::optional<float> scale, SourceLoc l, Finish&& finish) {
  check_decode_args(fn, q, "k_cache", k_cache, v_cache, lengths, false, l);
  check_lengths(fn, lengths, k_cache.dim(1), "the cache's positions", l);
  const int chunk = kCacheChunk;
  const int64_t chunks = ceil_div(k_cache.dim(1), int64_t{chunk});
  const QueryExtents e = query_extents(q);
  Partials p(e.batch, e.heads, chunks, e.dim, q.device(), l);
  auto run = [&](auto kernel) {
    return kernel(std::move(p.acc), std::move(p.m), std::move(p.l), q, k_cache, v_cache, lengths,
                  default_scale(scale, e.dim))
        .sync();
  };
  auto [acc, m, ls, q1, k1, v1, len1, s1] = run(decode_attention_chunks<T, QR, kCacheChunk>);
  return finish(q, lengths, chunk, std::move(acc), std::move(m), std::move(ls), l);
}

template <Element T, int Page>
Tensor<T, 3> run_paged(const Tensor<T, 3>& q, const Tensor<T, 4>& k_pages,
                       const Tensor<T, 4>& v_pages, const Tensor<int32_t, 2>& block_table,
                       const Tensor<int32_t, 1>& lengths, float scale, SourceLoc l) {
  const int64_t chunks = ceil_div(block_table.dim(1) * Page, kDecodeChunk);
  Partials p(q.dim(0), q.dim(1), chunks, q.dim(2), q.device(), l);
  auto [acc, m, ls, q1, k1, v1, t1, len1, s1] =
      paged_decode_attention_chunks<T, Page>(std::move(p.acc), std::move(p.m), std::move(p.l), q,
                                             k_pages, v_pages, block_table, lengths, scale)
          .sync();
  return combine(q, lengths, kChunk, std::move(acc), std::move(m), std::move(ls), l);
}

}  // namespace

template <Element T>
Tensor<T, 3> decode_attention(const Tensor<T, 3>& q, const Tensor<T, 4>& k_cache,
                              const Tensor<T, 4>& v_cache, const Tensor<int32_t, 1>& lengths,
                              std::optional<float> scale, std::source_location l) {
  return run_contiguous("decode_attention", q, k_cache, v_cache, lengths, scale, l,
                        [](auto&&... a) { return combine<T>(std::forward<decltype(a)>(a)...); });
}

template <Element T, int R>
Tensor<T, 2> decode_attention_merged(const Tensor<T, R>& q, const Tensor<T, 4>& k_cache,
                                     const Tensor<T, 4>& v_cache, const Tensor<int32_t, 1>& lengths,
                                     std::optional<float> scale, std::source_location l) {
  static_assert(R == 3 || R == 4, "decode_attention_merged: q is [B, Hq, D] or [B, 1, Hq, D]");
  return run_contiguous(
      "decode_attention_merged", q, k_cache, v_cache, lengths, scale, l,
      [](auto&&... a) { return combine_merged<T, R>(std::forward<decltype(a)>(a)...); });
}

template <Element T>
Tensor<T, 3> paged_decode_attention(const Tensor<T, 3>& q, const Tensor<T, 4>& k_pages,
                                    const Tensor<T, 4>& v_pages,
                                    const Tensor<int32_t, 2>& block_table,
                                    const Tensor<int32_t, 1>& lengths, std::optional<float> scale,
                                    std::source_location l) {
  const char* fn = "paged_decode_attention";
  check_decode_args(fn, q, "k_pages", k_pages, v_pages, lengths, true, l);
  detail::require(block_table.rank() == 2 && block_table.dim(0) == q.dim(0), l,
                  std::string(fn) + ": 'block_table' is " + to_string(block_table.shape()) +
                      " but must be [" + std::to_string(q.dim(0)) +
                      ", pages per sequence], one row per sequence of 'q'");
  detail::require_same_device(fn, "block_table", block_table.device(), q.device(), l);
  const int64_t page = k_pages.dim(1);
  check_lengths(fn, lengths, block_table.dim(1) * page, "the positions of a block_table row", l);
  const float s = default_scale(scale, q.dim(2));
  switch (page) {
    case 16:
      return run_paged<T, 16>(q, k_pages, v_pages, block_table, lengths, s, l);
    case 32:
      return run_paged<T, 32>(q, k_pages, v_pages, block_table, lengths, s, l);
    case 64:
      return run_paged<T, 64>(q, k_pages, v_pages, block_table, lengths, s, l);
    case 128:
      return run_paged<T, 128>(q, k_pages, v_pages, block_table, lengths, s, l);
    case 256:
      return run_paged<T, 256>(q, k_pages, v_pages, block_table, lengths, s, l);
    default:
      fail_at<UsageError>(l, fn, ": pages of ", page,
                          " positions (axis 1 of 'k_pages'); the page size must be 16, 32, 64, "
                          "128 or 256");
  }
}

#define TESSERA_DECODE_ATTENTION(T)                                                             \
  template Tensor<T, 3> decode_attention(const Tensor<T, 3>&, const Tensor<T, 4>&,              \
                                         const Tensor<T, 4>&, const Tensor<int32_t, 1>&,        \
                                         std::optional<float>, std::source_location);           \
  template Tensor<T, 2> decode_attention_merged(const Tensor<T, 3>&, const Tensor<T, 4>&,       \
                                                const Tensor<T, 4>&, const Tensor<int32_t, 1>&, \
                                                std::optional<float>, std::source_location);    \
  template Tensor<T, 2> decode_attention_merged(const Tensor<T, 4>&, const Tensor<T, 4>&,       \
                                                const Tensor<T, 4>&, const Tensor<int32_t, 1>&, \
                                                std::optional<float>, std::source_location);    \
  template Tensor<T, 3> paged_decode_attention(                                                 \
      const Tensor<T, 3>&, const Tensor<T, 4>&, const Tensor<T, 4>&, const Tensor<int32_t, 2>&, \
      const Tensor<int32_t, 1>&, std::optional<float>, std::source_location);
TESSERA_DECODE_ATTENTION(float)
TESSERA_DECODE_ATTENTION(half)
TESSERA_DECODE_ATTENTION(bfloat16)

}  // namespace tessera::kernels

// Top-k sampling. A tile block walks its row in chunks of kChunk columns and keeps a loop-carried
// list of the kMaxK best (value, index) pairs, sorted by value, ties by index. Merging a chunk
// into the list takes k steps, each moving the larger of the chunk's and the list's best into a
// new list and masking it where it came from (k steps a chunk; the DSL's topk would sort each
// 1024-wide chunk by ranking, 1024 reads an element, and still need this merge). Then the token is
// drawn from softmax(list / temperature) with the caller's uniform draw, by a cumulative sum over
// the list written as a masked sum (no cumsum op yet).
#include <climits>

#include "host.hpp"
#include "tessera/kernels/elementwise.hpp"

namespace tessera::kernels {
namespace {

using namespace tessera::tile;

constexpr int kChunk = 1024;

template <Element T>
TESSERA_KERNEL(top_k_sample_rows, Out<int32_t, 1> out, In<T, 2> x, In<float, 1> uniform,
               Scalar<int32_t> k, Scalar<float> temperature) {
  const Index row = tile_index(0);
  const Index chunks = ((x.dim(1) + (kChunk - 1)) / kChunk).template cast<int32_t>();
  const Index slot = iota<int32_t>({1, kMaxTopK}, 1);
  Tile<float> best = Tile<float>::full({1, kMaxTopK}, -INFINITY);
  Index best_index = Index::zeros({1, kMaxTopK});
  for_range(0, chunks, [&](Index c) {
    Tile<float> chunk = load(x, {row, c}, {1, kChunk}, Pad::neg_inf()).template cast<float>();
    const Index column = iota<int32_t>({1, kChunk}, 1) + c * kChunk;
    Tile<float> list = best;
    Tile<float> merged = Tile<float>::full({1, kMaxTopK}, -INFINITY);
    Index merged_index = Index::zeros({1, kMaxTopK});
    for_range(0, k, [&](Index t) {
      const Tile<float> from_chunk = max(chunk, 1), from_list = max(list, 1);
      const Tile<bool> take_list = from_list >= from_chunk;  // ties: the list's earlier index
      const Index chunk_at = min(select(chunk == from_chunk, column, INT32_MAX), 1);
      const Index list_at = min(select(list == from_list, slot, INT32_MAX), 1);
      const Index list_index = min(select(slot == list_at, best_index, INT32_MAX), 1);
      const Tile<bool> here = slot == t;
      merged = select(here, maximum(from_chunk, from_list), merged);
      merged_index = select(here, select(take_list, list_index, chunk_at), merged_index);
      chunk = select(take_list | (column != chunk_at), chunk, -INFINITY);
      list = select(!take_list | (slot != list_at), list, -INFINITY);
    });
    best = merged;
    best_index = merged_index;
  });
  // softmax over the k kept logits, and the first slot whose cumulative probability passes the
  // draw (the last kept slot if rounding leaves the draw past the total).
  const Tile<bool> kept = slot < k;
  const Tile<float> p = select(kept, exp((best - max(best, 1)) / temperature), 0.0f);
  const Tile<float> upto =
      (iota<int32_t>({kMaxTopK, kMaxTopK}, 0) <= iota<int32_t>({kMaxTopK, kMaxTopK}, 1))
          .template cast<float>();
  const Tile<float> cumulative = sum(p.reshape({kMaxTopK, 1}) * upto, 0);  // [1, kMaxTopK]
  const Tile<float> target = load(uniform, {row}, {1}, Pad::none()).reshape({1, 1}) * sum(p, 1);
  const Index chosen =
      minimum(min(select(kept & (cumulative > target), slot, INT32_MAX), 1), k - 1);
  out.store(min(select(slot == chosen, best_index, INT32_MAX), 1).reshape({1}));
};

}  // namespace

template <Element T>
Tensor<int32_t, 1> top_k_sample(const Tensor<T, 2>& logits, int k, float temperature,
                                const Tensor<float, 1>& uniform, std::source_location l) {
  const char* fn = "top_k_sample";
  detail::require_nonempty(fn, "logits", logits.shape(), 2, l);
  detail::require(k >= 1 && k <= kMaxTopK && k <= logits.dim(1), l,
                  std::string(fn) + ": k is " + std::to_string(k) + " but must be in [1, " +
                      std::to_string(std::min<int64_t>(kMaxTopK, logits.dim(1))) +
                      "] (at most kMaxTopK and the row's length)");
  detail::require(temperature > 0, l,
                  std::string(fn) + ": the temperature is " + std::to_string(temperature) +
                      " but must be positive; for greedy decoding use argmax()");
  detail::require_shape(fn, "uniform", uniform.shape(), {logits.dim(0)}, l);
  detail::require_same_device(fn, "uniform", uniform.device(), logits.device(), l);
  auto [y, x1, u1, k1, t1] =
      top_k_sample_rows<T>(
          detail::new_tensor<int32_t, 1>({logits.dim(0)}, logits.device(), l).partition({1}),
          logits, uniform, k, temperature)
          .sync();
  return std::move(y).unpartition();
}

#define TESSERA_TOP_K(T)                                                    \
  template Tensor<int32_t, 1> top_k_sample(const Tensor<T, 2>&, int, float, \
                                           const Tensor<float, 1>&, std::source_location);
TESSERA_TOP_K(float)
TESSERA_TOP_K(half)
TESSERA_TOP_K(bfloat16)

}  // namespace tessera::kernels

// prefetch: a hint, so a kernel that prefetches its inputs computes exactly what its twin without
// the prefetch computes, on every backend (on the GPU: sm_90 code issues each block's slice of the
// tensor into L2 before the wait for the kernel before it). The inputs are strided views (the
// harness's guarded buffers pad every row), one of them a column slice that starts mid-vector, so
// the span the GPU computes from the strides is neither contiguous nor 16-byte aligned; the matvec
// runs more blocks than its weight has 16-byte chunks on small shapes, so some blocks' slices are
// empty.
#include "../runtime/scoped_env.hpp"
#include "harness.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <Element T, bool Prefetch>
TESSERA_KERNEL(prefetched_axpy, Out<T> z, In<T> x, In<T> y) {
  if constexpr (Prefetch) {
    prefetch(x);
    prefetch(y);
  }
  z.store(load_like(x, z) * T(2) + load_like(y, z));
};

// A decode-shaped matvec (kernels/src/linear.cpp): block (m, j) sums rows [8 j, 8 j + 8) of w
// times row m of x, K in chunks of 64.
template <Element T, bool Prefetch>
TESSERA_KERNEL(prefetched_matvec, Out<float, 2> y, In<T, 2> x, In<T, 2> w) {
  if constexpr (Prefetch) prefetch(w);
  const Index m = tile_index(0), j = tile_index(1);
  Tile<float> acc = Tile<float>::zeros({8, 1});
  const Index chunks = ((x.dim(1) + 63) / 64).template cast<int32_t>();
  for_range(0, chunks, [&](Index k) {
    acc = acc + sum(load(w, {j, k}, {8, 64}).template cast<float>() *
                        load(x, {m, k}, {1, 64}).template cast<float>(),
                    1);
  });
  y.store(acc.reshape({1, 8}));
};

template <Element T>
void run_axpy(Rng& rng) {
  const Shape tile{4, 64};
  const Shape shape{rng.ragged(4, 3), rng.ragged(64, 3)};
  constexpr int64_t kStart = 3;  // y is columns [3, 3 + cols) of a wider buffer
  Guarded<T> x(shape, Guarded<T>::Fill::Input),
      y_wide({shape[0], shape[1] + 5}, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -50, 50);
  y_wide.fill_uniform(rng, -50, 50);
  Guarded<T> plain(shape, Guarded<T>::Fill::Output), fetched(shape, Guarded<T>::Fill::Output);
  const auto y = [&] { return y_wide.view().slice(1, kStart, kStart + shape[1]); };
  // The prefetch is emitted by default; the switch set here keeps these tests independent of the
  // environment they run in.
  const ScopedEnv on("TESSERA_AB_PREFETCH", "1");
  (void)prefetched_axpy<T, false>(plain.view().partition(tile), x.view(), y()).sync();
  (void)prefetched_axpy<T, true>(fetched.view().partition(tile), x.view(), y()).sync();
  expect_matches(
      plain,
      [&](const Shape& i) {
        return 2 * x.at(i) + y_wide.at({i[0], i[1] + kStart});
      },
      is_float(dtype_v<T>) ? 1e-2 : 0);
  expect_matches(
      fetched, [&](const Shape& i) { return plain.at(i); }, 0);
}

template <Element T>
void run_matvec(Rng& rng) {
  const int64_t m = rng.ragged(1, 3), n = rng.ragged(8, 6), k = rng.ragged(64, 4);
  Guarded<T> x({m, k}, Guarded<T>::Fill::Input), w({n, k}, Guarded<T>::Fill::Input);
  x.fill_uniform(rng, -2, 2);
  w.fill_uniform(rng, -2, 2);
  Guarded<float> plain({m, n}, Guarded<float>::Fill::Output);
  Guarded<float> fetched({m, n}, Guarded<float>::Fill::Output);
  const ScopedEnv on("TESSERA_AB_PREFETCH", "1");
  (void)prefetched_matvec<T, false>(plain.view().partition({1, 8}), x.view(), w.view()).sync();
  (void)prefetched_matvec<T, true>(fetched.view().partition({1, 8}), x.view(), w.view()).sync();
  const auto dot = [&](const Shape& i, bool magnitude) {
    double s = 0;
    for (int64_t c = 0; c < k; ++c) {
      const double p = x.at({i[0], c}) * w.at({i[1], c});
      s += magnitude ? std::abs(p) : p;
    }
    return s;
  };
  expect_matches(
      plain, [&](const Shape& i) { return dot(i, false); }, 1e-5,
      [&](const Shape& i) { return std::max(dot(i, true), 1e-3); });
  // Bit for bit: the prefetch changes no value and no order of the sums.
  expect_matches(
      fetched, [&](const Shape& i) { return plain.at(i); }, 0, [](const Shape&) { return 1.0; });
}

std::vector<Case> prefetch_rows() {
  std::vector<Case> rows;
  rows.push_back({"axpy_of_strided_and_sliced_inputs_f32", run_axpy<float>});
  rows.push_back({"axpy_of_strided_and_sliced_inputs_f16", run_axpy<half>});
  rows.push_back({"axpy_of_strided_and_sliced_inputs_i32", run_axpy<int32_t>});
  rows.push_back({"matvec_weights_f32", run_matvec<float>});
  rows.push_back({"matvec_weights_f16", run_matvec<half>});
  rows.push_back({"matvec_weights_bf16", run_matvec<bfloat16>});
  return rows;
}

TESSERA_OP_CASES(Prefetch, prefetch_rows());

}  // namespace
}  // namespace tessera::test

// Row-wise softmax, one row per tile block, in f32 and in f16 (computed in f32 either way). The
// block's tile is one row wide and BN >= the row's length long; the load pads the rest of the tile
// with -inf, which changes neither the row's max nor, after exp, its sum.
#include <cmath>
#include <cstdio>
#include <vector>

#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

template <Element T, int BN>
TESSERA_KERNEL(softmax, Out<T> z, In<T> x) {
  const Tile<float> row =
      load(x, {tile_index(0), 0}, {1, BN}, Pad::neg_inf()).template cast<float>();
  const Tile<float> e = exp(row - max(row, 1));
  z.store((e / sum(e, 1)).template cast<T>());
};

// Runs softmax on `rows` x `cols` values in T; returns the number of wrong elements.
template <Element T>
int64_t check(int64_t rows, int64_t cols, double rtol, double atol) {
  constexpr int BN = 512;
  std::vector<T> xs(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = T(3.0f * std::sin(0.37f * static_cast<float>(i)));
  auto z = zeros<T>({rows, cols}).partition({1, BN});  // grid: rows x 1
  auto [z1, x1] = softmax<T, BN>(std::move(z), from_host(xs, {rows, cols})).sync();
  const std::vector<T> out = std::move(z1).unpartition().to_vector();
  int64_t wrong = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::fmax(m, static_cast<float>(xs[r * cols + c]));
    for (int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<float>(xs[r * cols + c]) - m);
    for (int64_t c = 0; c < cols; ++c) {
      const double want = std::exp(static_cast<float>(xs[r * cols + c]) - m) / s;
      const double got = static_cast<float>(out[r * cols + c]);
      if (!(std::fabs(got - want) <= rtol * want + atol) && wrong++ < 5)
        std::printf("softmax: row %lld column %lld is %.9g, the reference is %.9g\n",
                    static_cast<long long>(r), static_cast<long long>(c), got, want);
    }
  }
  return wrong;
}

int main() {
  const int64_t rows = 256, cols = 300;
  // f32: a few roundings of the exp, the sum and the division. f16: the output's own rounding,
  // and its subnormals' absolute spacing for the smallest probabilities.
  const int64_t wrong = check<float>(rows, cols, 1e-5, 1e-9) + check<half>(rows, cols, 2e-3, 1e-7);
  if (wrong) {
    std::printf("softmax: %lld elements differ from the reference\n",
                static_cast<long long>(wrong));
    return 1;
  }
  std::printf("softmax: %lld rows of %lld, f32 and f16, on %s: ok\n", static_cast<long long>(rows),
              static_cast<long long>(cols), default_device().str().c_str());
  return 0;
}

// A kernel templated on its element type converts with the free cast<U>(x), with no `template`
// keyword (tests/tile/compiles_clean/template_kernel_casts.cpp compiles the same kernel with
// -Werror on both compilers); here it runs, for two element types, on the CPU backend.
#include <gtest/gtest.h>

#include <vector>

#include <tessera/tessera.hpp>

namespace tessera::test {
namespace {

using namespace tessera::tile;

template <class T>
TESSERA_KERNEL(scaled_row_sum, Out<float> z, In<T> x, Scalar<T> scale) {
  Tile<float> acc = Tile<float>::zeros({1, 8});
  const Index chunks = cast<int32_t>((x.dim(1) + 7) / 8);
  for_range(0, chunks, [&](Index k) {
    acc += cast<float>(load(x, {tile_index(0), k}, {1, 8}) * scale);
  });
  z.store(sum(acc, 1));
};

template <class T>
std::vector<float> row_sums_of_ones(int64_t rows, int64_t cols, T scale) {
  auto x = ones<T>({rows, cols}, Device::cpu());
  auto z = zeros<float>({rows, 1}, Device::cpu()).partition({1, 1});
  auto [z1, x1, s] = scaled_row_sum<T>(std::move(z), x, scale).sync();
  return std::move(z1).unpartition().to_vector();
}

TEST(TemplateKernel, CastsWithoutTheTemplateKeywordForEveryElementType) {
  EXPECT_EQ(row_sums_of_ones<float>(3, 20, 2.0f), std::vector<float>(3, 40.0f));
  EXPECT_EQ(row_sums_of_ones<half>(2, 13, half(3.0f)), std::vector<float>(2, 39.0f));
}

}  // namespace
}  // namespace tessera::test

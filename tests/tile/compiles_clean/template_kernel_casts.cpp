// A kernel templated on its element type converts with the free function cast<U>(x), which needs
// no `template` keyword where x's type depends on the template (x.cast<U>() would need
// x.template cast<U>()). The test compiles this with -Werror; tests/tile/template_kernel_test.cpp
// runs the same kernel.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

template <class T>
TESSERA_KERNEL(scaled_sum, Out<float> z, In<T> x, Scalar<T> scale) {
  Tile<float> acc = Tile<float>::zeros({1, 8});
  const Index chunks = cast<int32_t>((x.dim(1) + 7) / 8);
  for_range(0, chunks, [&](Index k) {
    acc += cast<float>(load(x, {tile_index(0), k}, {1, 8}) * scale);
  });
  z.store(cast<float>(cast<T>(sum(acc, 1))));
};

void instantiate() {
  auto x = ones<half>({4, 20});
  auto [z, x1, s] = scaled_sum<half>(zeros<float>({4, 1}).partition({1, 1}), x, half(2.0f)).sync();
}

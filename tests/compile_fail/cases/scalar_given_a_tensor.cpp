// expect-error: this argument is for a Scalar<T> parameter: pass a value convertible to T
// A tensor passed where the kernel takes a run-time scalar.
#include <tessera/tessera.hpp>

using namespace tessera;
using namespace tessera::tile;

TESSERA_KERNEL(scale, Out<float> z, Scalar<float> a, In<float> x) {
  z.store(a * load_like(x, z));
};

void run() {
  auto x = ones<float>({64});
#ifdef TESSERA_COMPILE_FAIL
  auto [z1, a1, x1] = scale(zeros<float>({64}).partition({16}), x, x).sync();
#else
  auto [z1, a1, x1] = scale(zeros<float>({64}).partition({16}), 2.0f, x).sync();
#endif
}

// Every operand mix of the tile operators, which must compile without a single warning (the test
// compiles this file with -Werror, with the project's compiler and, where it is installed, with
// clang++ too). C++20 also tries `b == a` for `a == b`; operators whose two candidates convert
// different operands better are "ambiguous even though the second is reversed" (g++ 13,
// clang's -Wambiguous-reversed-operator), which users' own kernels would then hit.
#include <tessera/tessera.hpp>

using namespace tessera::tile;

template <class T>
void all_operators(const Tile<T>& a, const Tile<T>& b, T s) {
  // tile-tile, tile-scalar, scalar-tile; lvalues, temporaries and both at once.
  (void)(a == b);
  (void)(a != b);
  (void)(a < b);
  (void)(a <= b);
  (void)(a > b);
  (void)(a >= b);
  (void)(a == s);
  (void)(a != s);
  (void)(a < s);
  (void)(a <= s);
  (void)(a > s);
  (void)(a >= s);
  (void)(s == a);
  (void)(s != a);
  (void)(s < a);
  (void)(s <= a);
  (void)(s > a);
  (void)(s >= a);
  (void)(a + b);
  (void)(a - s);
  (void)(s * a);
  (void)(a / b);
  (void)((a / s) * s == a);
  (void)(a == (a / s) * s);
  (void)((a + b) != (a - b));
  (void)(a + b == s);
  (void)(s == a + b);
  (void)(-a == a);
  (void)(-a != -b);
  Tile<T> c = a;
  c += b;
  c -= a;
  c *= b;
  c /= a;
}

void index_and_scalars(const Index& i, const Index& j, const Scalar<float>& x,
                       const Tile<float>& t) {
  all_operators<int32_t>(i, j, 2);
  all_operators<float>(t, x, 2.0f);
  (void)((i / 2) * 2 == i);
  (void)(i == 0);
  (void)(0 == i);
  (void)(i < j);
  (void)(i + 1 != j);
  (void)(x == t);
  (void)(t == x);
  (void)(x != 1.0f);
  (void)(1.0f != x);
  (void)((i == j) & (i != 0));
  (void)((i < j) | !(i > j));
  (void)((i == j) == (j == i));
  // The integer operators and the float functions, in every operand mix.
  (void)(i % j);
  (void)(i % 3);
  (void)(7 % i);
  (void)(i << j);
  (void)(i << 2);
  (void)(1 << i);
  (void)(i >> j);
  (void)(i >> 2);
  (void)(i ^ j);
  (void)(i ^ 5);
  (void)(~i == j);
  (void)((i == j) ^ (j == i));
  Index k = i;
  k %= j;
  (void)pow(t, t);
  (void)pow(t, 2.0f);
  (void)pow(2.0f, t);
  (void)fmod(t, x);
  (void)copysign(1.0f, t);
  (void)fma(t, t, t);
  (void)clamp(t, 0.0f, 6.0f);
  (void)(isnan(t) | isinf(t));
}

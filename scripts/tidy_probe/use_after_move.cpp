// Not built. scripts/tidy.sh checks that clang-tidy reports the second use of `t` below, which
// is how CI proves that its use-after-move check is alive.
#include <tessera/tessera.hpp>

int main() {
  auto t = tessera::zeros<float>({8}, tessera::Device::cpu());
  auto p = std::move(t).partition({4});
  return static_cast<int>(t.numel());  // use after move: must be flagged
}

// An unpadded load_at that reaches past the tensor is a BoundsError at the user's line, naming
// the element the tile starts at; the same load inside the tensor runs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <tessera/tessera.hpp>

#include "runtime/expect_error.hpp"

namespace tessera::test {
namespace {

using namespace tessera::tile;

int g_line = 0;
template <class F>
void at(int line, F&& f) {
  g_line = line;
  f();
}

// Each block reads its tile of x shifted one element right, unpadded.
TESSERA_KERNEL(shifted_unpadded, Out<float> z, In<float> x) {
  const Index first = z.tile_index(0) * 8 + 1;
  at(__LINE__, [&] { z.store(load_at(x, {first}, {8}, Pad::none())); });
};

TEST(LoadAtBounds, UnpaddedLoadAtPastTheTensorIsABoundsErrorNamingItsFirstElement) {
  auto x = ones<float>({16}, Device::cpu());
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  g_line = 0;
  auto future = shifted_unpadded(std::move(z), x);
  const std::string m = error_of<BoundsError>([&] { (void)std::move(future).sync(); });
  EXPECT_EQ(file_and_line(m), tessera::detail::cat(__FILE__, ":", g_line));
  EXPECT_EQ(after_location(m),
            "unpadded load from 'x' at element [9] of shape [8] reaches element 16 along axis 0, "
            "outside the tensor's extent 16; load with padding (the default) to read past the "
            "edge");
}

TEST(LoadAtBounds, UnpaddedLoadAtInsideTheTensorRuns) {
  std::vector<float> xs(17);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i);
  auto x = from_host(xs, Device::cpu());
  auto z = zeros<float>({16}, Device::cpu()).partition({8});
  auto [out, in] = shifted_unpadded(std::move(z), x).sync();
  EXPECT_EQ(std::move(out).unpartition().to_vector(), std::vector<float>(xs.begin() + 1, xs.end()));
}

}  // namespace
}  // namespace tessera::test

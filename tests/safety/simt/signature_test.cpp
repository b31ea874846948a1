// Class 6 of issue 10: a kernel built ahead of time is matched by more than its name. Its image
// carries the record of the body's parameter types as its compiler saw the declaration
// (tessera_simt_signature_<name>, written by TESSERA_SIMT_DEFINE), and the module checks it against
// the host's declaration before the first launch. The fake driver plants the record a stale .cu
// would carry (the real one, built by nvcc against a stale header, is in gpu_attack_test.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "tessera/simt/launch.hpp"
#include "test_kernels.hpp"

// The declarations a stale .cu could have been compiled against (the current ones are in
// tests/simt/test_kernels.hpp).
namespace stale_output_now_input {
using namespace tessera::simt;
TESSERA_SIMT_KERNEL(t_add, Index1D i, DisjointSpan<float> out, DisjointSpan<float> x,
                    Span<const float> y) {
  return contract<1>();
};
}  // namespace stale_output_now_input
namespace stale_dtype {
using namespace tessera::simt;
TESSERA_SIMT_KERNEL(t_add, Index1D i, DisjointSpan<float> out, Span<const float> x,
                    Span<const int> y) {
  return contract<1>();
};
}  // namespace stale_dtype
namespace stale_arity {
using namespace tessera::simt;
TESSERA_SIMT_KERNEL(t_add, Index1D i, DisjointSpan<float> out, Span<const float> x) {
  return contract<1>();
};
}  // namespace stale_arity
namespace stale_witness {
using namespace tessera::simt;
TESSERA_SIMT_KERNEL(t_tile, const TileIndex2D<32, 32, 2, 2>& t, DisjointSpan2D<int> out, int base) {
  return contract<2>();
};
}  // namespace stale_witness

namespace tessera::simt {
namespace {

using testing::FakeDriver;

template <class E>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error of the expected type)";
}

template <class K>
std::vector<unsigned char> record_of() {
  const detail::SignatureRecord r = detail::signature_of<K>();
  std::vector<unsigned char> bytes(sizeof r);
  std::memcpy(bytes.data(), &r, sizeof r);
  return bytes;
}

class SimtSignature : public ::testing::Test {
 protected:
  void SetUp() override {
    fake.device.name = "Fake H200";
    fake.device.cc = {9, 0};
  }
  Module module() { return Module::nvrtc<SIMT_TEST_KERNELS>(kTestKernelsSource, "add.cu"); }
  template <class Stale>
  void plant() {
    fake.globals["tessera_simt_signature_" + std::string(Stale::kName)] = record_of<Stale>();
  }

  FakeDriver fake;
  detail::ScopedDriverBridge installed{fake};
};

TEST_F(SimtSignature, AnOutputThatIsNowAnInputIsNamedAtPrepare) {
  plant<stale_output_now_input::t_add>();
  const std::string e =
      error_of<UsageError>([&] { (void)prepare<t_add>(module(), cover(64, 64)); });
  EXPECT_NE(e.find("kernel 't_add': parameter 'x' (#3) was compiled in add.cu as an output "
                   "DisjointSpan<float>, but the host declares it an input Span<const float>; "
                   "rebuild add.cu against the current declaration of 't_add'"),
            std::string::npos)
      << e;
  EXPECT_TRUE(fake.launches.empty());
}

TEST_F(SimtSignature, AnUncheckedLaunchChecksTheSignatureToo) {
  plant<stale_output_now_input::t_add>();
  std::vector<float> o(64), x(64), y(64);
  RawLaunchConfig raw;
  raw.block[0] = 64;
  const std::string e = error_of<UsageError>([&] {
    (void)launch_unchecked<t_add>(module(), raw,
                                  wrap_unowned_unchecked(o.data(), {64}, Device::cuda(0)),
                                  wrap_unowned_unchecked(x.data(), {64}, Device::cuda(0)),
                                  wrap_unowned_unchecked(y.data(), {64}, Device::cuda(0)));
  });
  EXPECT_NE(e.find("parameter 'x' (#3) was compiled in add.cu as an output"), std::string::npos)
      << e;
  EXPECT_TRUE(fake.launches.empty());
}

TEST_F(SimtSignature, AnElementTypeThatChangedIsNamed) {
  plant<stale_dtype::t_add>();
  const std::string e =
      error_of<UsageError>([&] { (void)prepare<t_add>(module(), cover(64, 64)); });
  EXPECT_NE(e.find("parameter 'y' (#4) was compiled in add.cu as an input Span<const int>, but "
                   "the host declares it an input Span<const float>"),
            std::string::npos)
      << e;
}

TEST_F(SimtSignature, AParameterCountThatChangedIsNamed) {
  plant<stale_arity::t_add>();
  const std::string e =
      error_of<UsageError>([&] { (void)prepare<t_add>(module(), cover(64, 64)); });
  EXPECT_NE(e.find("kernel 't_add' in add.cu was compiled with 3 parameters, but the host "
                   "declares 4"),
            std::string::npos)
      << e;
}

TEST_F(SimtSignature, AWitnessOfAnotherMicroTileIsNamed) {
  plant<stale_witness::t_tile>();
  const std::string e = error_of<UsageError>([&] {
    (void)prepare<t_tile>(module(), LaunchConfig<2>{{{1, 1}}, {{8, 8}}});
  });
  EXPECT_NE(e.find("kernel 't_tile': its witness 't' was compiled in add.cu with another index "
                   "space"),
            std::string::npos)
      << e;
}

TEST_F(SimtSignature, TheCurrentDeclarationsRecordIsAccepted) {
  plant<t_add>();  // the twin: what an up-to-date .cu carries
  std::vector<float> o(64), x(64), y(64);
  EXPECT_NO_THROW((void)prepare<t_add>(module(), cover(64, 64))(
                      wrap_unowned_unchecked(o.data(), {64}, Device::cuda(0)),
                      wrap_unowned_unchecked(x.data(), {64}, Device::cuda(0)),
                      wrap_unowned_unchecked(y.data(), {64}, Device::cuda(0)))
                      .sync());
  EXPECT_EQ(fake.launches.size(), 1u);
}

TEST(SimtSignatureRecord, AnImageBuiltAheadOfTimeWithoutARecordIsRefused) {
  detail::FunctionInfo aot;
  aot.image = "old.cu";
  aot.ahead_of_time = true;
  const std::string e = error_of<UsageError>([&] {
    detail::check_signature("t_add", t_add::kParams, detail::signature_of<t_add>(), aot);
  });
  EXPECT_NE(e.find("kernel 't_add' in old.cu carries no signature record"), std::string::npos) << e;
  // The twin: NVRTC compiled its source with the host's own declaration in front of it.
  detail::FunctionInfo nvrtc = aot;
  nvrtc.ahead_of_time = false;
  EXPECT_NO_THROW(
      detail::check_signature("t_add", t_add::kParams, detail::signature_of<t_add>(), nvrtc));
}

TEST(SimtSignatureRecord, RecordsOfDifferentDeclarationsDiffer) {
  const auto a = record_of<t_add>();
  EXPECT_NE(a, record_of<stale_output_now_input::t_add>());
  EXPECT_NE(a, record_of<stale_dtype::t_add>());
  EXPECT_NE(a, record_of<stale_arity::t_add>());
  EXPECT_NE(record_of<t_tile>(), record_of<stale_witness::t_tile>());
  EXPECT_EQ(a, record_of<t_add>());
}

}  // namespace
}  // namespace tessera::simt

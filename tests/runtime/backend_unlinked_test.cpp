// Linked with the runtime alone (tessera_runtime, as Tessera::simt links it), not Tessera::tessera:
// no CUDA backend is registered, and asking for one says which target brings it.
#include <gtest/gtest.h>

#include <string>

#include <tessera/backend/backend.hpp>
#include <tessera/core/error.hpp>

namespace tessera::test {
namespace {

TEST(BackendsUnlinked, OnlyTheCpuOneIsThere) {
  ASSERT_EQ(backend::registered_backends().size(), 1u);
  EXPECT_EQ(backend::registered_backends()[0]->name(), "cpu");
  EXPECT_EQ(backend::backend_for(DeviceKind::CPU).name(), "cpu");
}

TEST(BackendsUnlinked, AskingForTheCudaOneNamesTheTargetThatLinksIt) {
  const SourceLoc here = SourceLoc::current();
  try {
    (void)backend::backend_for(DeviceKind::CUDA, here);
    FAIL() << "a CUDA backend without tessera_cuda_backend linked";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Tessera::tessera"), std::string::npos) << what;
    EXPECT_NE(what.find("TESSERA_DEVICE=cpu"), std::string::npos) << what;
    EXPECT_EQ(what.rfind(here.str() + ": error: ", 0), 0u) << what;  // at the caller's line
  }
}

}  // namespace
}  // namespace tessera::test

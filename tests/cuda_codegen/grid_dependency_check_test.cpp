// The PTX reading of grid_dependency_check.hpp, on hand-written PTX: it must find a global access,
// a call or a branch that skips the wait before griddepcontrol.wait, or else the codegen tests
// built on it could pass for the wrong reason.
#include <gtest/gtest.h>

#include <string>

#include "grid_dependency_check.hpp"

namespace tessera::test {
namespace {

// An entry whose body is `before`, the wait, then `after`.
std::string entry(const std::string& before, const std::string& after = "") {
  return ".visible .entry k(\n\t.param .u64 k_param_0\n)\n{\n\t.reg .b32 %r<9>;\n" + before +
         "\tgriddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;\n" + after +
         "\tld.global.u32 %r3, [%rd1];\n\tret;\n}\n";
}

TEST(GridDependencyCheck, AcceptsParameterSharedAndBarrierWorkBeforeTheWait) {
  const std::string ptx = entry(
      "\tld.param.u64 %rd1, [k_param_0];\n\tmov.u32 %r1, %tid.x;\n\tsetp.ne.s32 %p1, %r1, 0;\n"
      "\t@%p1 bra $L__BB0_2;\n\tmbarrier.init.shared::cta.b64 [%r2], %r1;\n"
      "\tst.shared.u32 [%r2], %r1;\n\tprefetch.tensormap [%rd1];\n"
      "\tcp.async.bulk.prefetch.L2.global [%rd1], %r1;\n$L__BB0_2:\n\tbar.sync 0;\n");
  EXPECT_EQ(grid_dependency_violation(ptx, "k"), "");
}

TEST(GridDependencyCheck, FindsGlobalAndGenericAccessesAndCallsBeforeTheWait) {
  for (const char* access :
       {"\tld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];\n",
        "\t@%p1 st.global.f32 [%rd1], %f1;\n", "\tld.u32 %r1, [%rd1];\n",
        "\tatom.global.add.u32 %r1, [%rd1], 1;\n", "\tred.global.add.f32 [%rd1], %f1;\n",
        "\tcp.async.ca.shared.global [%r1], [%rd1], 16;\n",
        "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], "
        "[%rd1, {%r2, %r3}], [%r4];\n",
        "\tcall.uni tsr_report, (%r1);\n", "\tprefetch.global.L2 [%rd1];\n",
        "\tcp.async.bulk.prefetch.tensor.1d.L2.global.tile [%rd1, {%r1}];\n"}) {
    const std::string v = grid_dependency_violation(entry(access), "k");
    EXPECT_NE(v.find("before griddepcontrol.wait"), std::string::npos) << access << v;
  }
}

TEST(GridDependencyCheck, FindsABranchThatSkipsTheWait) {
  const std::string ptx = entry("\t@%p1 bra $L__BB0_9;\n", "$L__BB0_9:\n");
  EXPECT_NE(grid_dependency_violation(ptx, "k").find("reaches past it"), std::string::npos);
}

TEST(GridDependencyCheck, FindsAMissingOrRepeatedWaitAndAnEarlyLaunchOfDependents) {
  EXPECT_NE(grid_dependency_violation(".entry k(\n)\n{\n\tret;\n}\n", "k"), "");
  EXPECT_NE(grid_dependency_violation(entry("", "\tgriddepcontrol.wait;\n"), "k"), "");
  const std::string early =
      ".entry k(\n)\n{\n\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n\tret;\n}\n";
  EXPECT_NE(grid_dependency_violation(early, "k").find("before griddepcontrol.wait"),
            std::string::npos);
  EXPECT_NE(grid_dependency_violation(entry(""), "other"), "");
}

}  // namespace
}  // namespace tessera::test

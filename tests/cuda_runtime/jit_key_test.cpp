// The JIT cache key and its building blocks: every part of what a compiled kernel depends on
// changes the key, and nothing else does.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "../runtime/scoped_env.hpp"
#include "tessera/runtime/jit_cache.hpp"

using namespace tessera::runtime;

namespace {

JitKeyParts base() {
  return {.program = "extern \"C\" __global__ void k() {}",
          .specialization = "f32:r1:align16",
          .arch = "sm_90a",
          .compiler_version = 13000,
          .options = "-std=c++17"};
}

TEST(JitKey, SamePartsGiveTheSameKey) {
  EXPECT_EQ(jit_key(base()), jit_key(base()));
}

TEST(JitKey, EachPartChangesTheKey) {
  std::set<std::string> keys{jit_key(base())};
  JitKeyParts p = base();
  p.program = "extern \"C\" __global__ void k() { }";
  keys.insert(jit_key(p));
  p = base();
  p.specialization = "f32:r1:align4";
  keys.insert(jit_key(p));
  p = base();
  p.arch = "sm_80";
  keys.insert(jit_key(p));
  p = base();
  p.compiler_version = 12080;
  keys.insert(jit_key(p));
  p = base();
  p.options = "-std=c++17 -lineinfo";
  keys.insert(jit_key(p));
  EXPECT_EQ(keys.size(), 6u);
}

TEST(JitKey, MovingTextBetweenPartsChangesTheKey) {
  JitKeyParts a = base(), b = base();
  a.specialization = "ab";
  a.arch = "c";
  b.specialization = "a";
  b.arch = "bc";
  EXPECT_NE(jit_key(a), jit_key(b));
}

TEST(JitKey, KeyNamesTheTesseraVersion) {
  ASSERT_FALSE(tessera_version().empty());
  EXPECT_NE(jit_key(base()).find(tessera_version()), std::string::npos);
}

TEST(Fnv1a64, MatchesThePublishedTestVectors) {
  // From the FNV reference (Fowler, Noll, Vo): the offset basis, and the hashes of "a" and
  // "foobar".
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(Fnv1a64, HexIsSixteenLowercaseDigits) {
  EXPECT_EQ(hex64(0), "0000000000000000");
  EXPECT_EQ(hex64(0xaf63dc4c8601ec8cull), "af63dc4c8601ec8c");
}

TEST(LogSwitch, NamesTopicsInACommaSeparatedList) {
  ScopedEnv log("TESSERA_LOG", "launch,jit");
  EXPECT_TRUE(log_enabled("jit"));
  EXPECT_TRUE(log_enabled("launch"));
  EXPECT_FALSE(log_enabled("ji"));
  log.set("all");
  EXPECT_TRUE(log_enabled("jit"));
  log.set(nullptr);
  EXPECT_FALSE(log_enabled("jit"));
}

}  // namespace

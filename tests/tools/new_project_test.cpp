// `tessera new NAME`: the project it writes, and that it never overwrites anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "scaffold.hpp"
#include "tessera/core/error.hpp"

namespace tessera::tools {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Each test runs in a fresh folder of its own (tessera new writes into the current folder).
class NewProject : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::temp_directory_path() /
            (std::string("tessera_new_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    old_ = fs::current_path();
    fs::current_path(root_);
  }
  void TearDown() override {
    fs::current_path(old_);
    fs::remove_all(root_);
  }
  fs::path root_, old_;
};

TEST_F(NewProject, WritesEveryScaffoldFileWithTheProjectsNameAndPrefix) {
  write_new_project("demo", "/opt/tessera");
  const auto files = scaffold_files("demo", "/opt/tessera");
  ASSERT_FALSE(files.empty());
  for (const ScaffoldFile& file : files) EXPECT_EQ(read(root_ / "demo" / file.path), file.text);
  const std::string cmake = read(root_ / "demo/CMakeLists.txt");
  EXPECT_NE(cmake.find("project(demo LANGUAGES CXX)"), std::string::npos) << cmake;
  EXPECT_NE(cmake.find("find_package(Tessera 0.1 CONFIG REQUIRED)"), std::string::npos) << cmake;
  EXPECT_NE(cmake.find("add_test(NAME demo_test COMMAND demo_test)"), std::string::npos) << cmake;
  EXPECT_EQ(cmake.find('@'), std::string::npos) << "a placeholder was left unfilled:\n" << cmake;
  const std::string readme = read(root_ / "demo/README.md");
  EXPECT_NE(readme.find("cmake -S . -B build -DCMAKE_PREFIX_PATH=/opt/tessera && cmake --build "
                        "build\nctest --test-dir build --output-on-failure\n"),
            std::string::npos)
      << readme;
  EXPECT_NE(read(root_ / "demo/kernel.hpp").find("TESSERA_KERNEL(scaled_add"), std::string::npos);
}

TEST_F(NewProject, ReadmeSaysWhereToPointCMakeWhenThePrefixIsUnknown) {
  write_new_project("demo", "");
  EXPECT_NE(read(root_ / "demo/README.md")
                .find("-DCMAKE_PREFIX_PATH=<the folder Tessera is installed in>"),
            std::string::npos);
}

TEST_F(NewProject, RefusesAnExistingFolderAndLeavesItUntouched) {
  fs::create_directory("demo");
  std::ofstream("demo/main.cpp") << "mine";
  try {
    write_new_project("demo", "");
    FAIL() << "wrote into an existing folder";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "'demo' already exists; tessera new never overwrites. Choose another name, or "
                 "move 'demo' away first.");
  }
  EXPECT_EQ(read(root_ / "demo/main.cpp"), "mine");
  EXPECT_FALSE(fs::exists(root_ / "demo/CMakeLists.txt"));
}

TEST_F(NewProject, RefusesAnExistingFileOfThatName) {
  std::ofstream("demo") << "mine";
  EXPECT_THROW(write_new_project("demo", ""), UsageError);
  EXPECT_EQ(read(root_ / "demo"), "mine");
}

TEST_F(NewProject, RefusesANameThatIsNotAProjectNameAndWritesNothing) {
  for (const char* name : {"", "1st", "my kernels", "../up", "a/b", "-x"}) {
    try {
      write_new_project(name, "");
      ADD_FAILURE() << "accepted '" << name << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("'") + name +
                    "' is not a project name: it names the folder, the CMake project and its "
                    "targets, so it must start with a letter and hold only letters, digits, '_' "
                    "and '-'. Choose a name such as my_kernels.");
    }
  }
  EXPECT_TRUE(fs::is_empty(root_));
}

}  // namespace
}  // namespace tessera::tools

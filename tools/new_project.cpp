// `tessera new NAME`: writes a project that builds against the installed Tessera package (one
// kernel, a program, a test, a README with the two commands). It never overwrites: the folder
// must not exist, and a failure part way removes what was written.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "commands.hpp"
#include "scaffold.hpp"
#include "tessera/core/error.hpp"

namespace tessera::tools {

namespace {

namespace fs = std::filesystem;

constexpr const char* kNewUsage = "usage: tessera new NAME   (writes the project into ./NAME)\n";

// The folder this tool was installed in (<prefix>/bin/tessera), when a Tessera package is installed
// beside it; empty when the tool runs from a build folder.
std::string installed_prefix() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const fs::path prefix = exe.parent_path().parent_path();
  // GNUInstallDirs' library folder: lib, lib64, or lib/<multiarch> under /usr.
  for (const fs::path& libdir : {prefix / "lib", prefix / "lib64"}) {
    if (fs::exists(libdir / "cmake/Tessera/TesseraConfig.cmake", ec)) return prefix.string();
    for (const fs::directory_entry& sub : fs::directory_iterator(libdir, ec))
      if (fs::exists(sub.path() / "cmake/Tessera/TesseraConfig.cmake", ec)) return prefix.string();
  }
  return {};
}

// A project name is also its CMake target's name and a file name: a letter, then letters, digits,
// '_' or '-'.
void check_name(const std::string& name) {
  const bool ok = !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
                  });
  if (!ok)
    throw UsageError(detail::cat(
        "'", name,
        "' is not a project name: it names the folder, the CMake project and its targets, so it "
        "must start with a letter and hold only letters, digits, '_' and '-'. Choose a name such "
        "as my_kernels."));
}

}  // namespace

void write_new_project(const std::string& name, const std::string& prefix) {
  check_name(name);
  const fs::path dir = fs::path(name);
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)) || !fs::create_directory(dir, ec)) {
    if (ec)
      throw UsageError(detail::cat("cannot create the folder '", name, "': ", ec.message(),
                                   ". Run tessera new from a folder you can write to."));
    throw UsageError(detail::cat("'", name,
                                 "' already exists; tessera new never overwrites. Choose another "
                                 "name, or move '",
                                 name, "' away first."));
  }
  // From here the folder is ours: a failure removes it, so nothing half-written is left.
  try {
    for (const ScaffoldFile& file : scaffold_files(name, prefix)) {
      std::ofstream out(dir / file.path, std::ios::binary);
      out << file.text;
      out.close();
      if (!out)
        throw BackendError(
            detail::cat("cannot write '", (dir / file.path).string(), "' (is the disk full?)"));
    }
  } catch (...) {
    fs::remove_all(dir, ec);
    throw;
  }
}

int new_project(const std::vector<std::string>& args) {
  if (args.size() != 1) {
    std::cerr << kNewUsage;
    return 2;
  }
  const std::string& name = args[0];
  const std::string prefix = installed_prefix();
  write_new_project(name, prefix);
  const std::string where = prefix.empty() ? "<the folder Tessera is installed in>" : prefix;
  std::cout << "created " << name
            << "/: CMakeLists.txt, kernel.hpp, main.cpp, test.cpp, README.md\n"
            << "build it and run its test:\n"
            << "  cd " << name << "\n"
            << "  cmake -S . -B build -DCMAKE_PREFIX_PATH=" << where << " && cmake --build build\n"
            << "  ctest --test-dir build --output-on-failure\n";
  return 0;
}

}  // namespace tessera::tools

// `tessera <command> [args]`: the developer's tool (DESIGN §3 layer 9).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"

namespace {

constexpr const char* kUsage =
    "usage: tessera <command>\n"
    "\n"
    "commands:\n"
    "  doctor               check the driver, GPUs, NVRTC and the kernel cache\n"
    "  cache                list the kernel cache's entries: kernel, size, hits\n"
    "  cache dir            print the kernel cache folder\n"
    "  cache size           print how much the kernel cache holds\n"
    "  cache clear          delete the kernel cache's entries\n"
    "  new NAME             write a new project into ./NAME: a kernel, a test, a CMakeLists.txt\n"
    "                       that finds the installed Tessera, a README with the two commands\n"
    "  help                 print this\n";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + (argc > 1 ? 2 : argc), argv + argc);
  const std::string command = argc > 1 ? argv[1] : "help";
  try {
    if (command == "doctor") return tessera::tools::doctor(args);
    if (command == "cache") return tessera::tools::cache(args);
    if (command == "new") return tessera::tools::new_project(args);
    if (command == "help" || command == "--help" || command == "-h") {
      std::cout << kUsage;
      return 0;
    }
    std::cerr << "tessera: '" << command << "' is not a command\n\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tessera " << command << ": " << e.what() << "\n";
    return 1;
  }
}
